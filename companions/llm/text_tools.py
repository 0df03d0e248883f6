"""Tool calls that a model wrote as text instead of native ``tool_calls``: hold them back, parse them, or drop them.

Small models on servers without (working) native tool calling write ``<tool_call>{...}</tool_call>``,
``functions.speak:``, a bare JSON object, or the tool schema itself as their reply. None of that may be shown or
spoken as a companion's line: :func:`looks_like_tool_text` says while streaming whether the text so far must be held
back, :func:`parse_text_tool_calls` turns what can be understood into :class:`ToolCall` values, and
:func:`strip_tool_text` is the last guard that leaves only prose.
"""

from __future__ import annotations

# What a reply that is tool syntax or JSON starts with (after leading whitespace), lower-cased where it matters.
_TOOL_STARTS: tuple[str, ...] = ("{", "[", "<tool_call", "<tools", "<function", "functions.", "```", "✿function")


def looks_like_tool_text(prefix: str) -> bool:
    """Whether a streamed reply that begins with ``prefix`` could still be tool syntax or JSON.

    True when the beginning (leading whitespace stripped) starts with one of ``{``, ``[``, ``<tool_call``,
    ``<tools``, ``<function``, ``functions.``, a code fence or ``✿FUNCTION``, or is a strict prefix of one of them
    (``"<to"``, ``"func"``): the caller holds such text back from display until it knows more. An empty or
    all-whitespace prefix is a prefix of everything, so it is True (there is nothing to show yet either way).
    Cheap enough for every streamed delta: it looks at the first dozen characters only.
    """
    head = prefix.lstrip()[:12].casefold()
    return any(head.startswith(start) or start.startswith(head) for start in _TOOL_STARTS)
