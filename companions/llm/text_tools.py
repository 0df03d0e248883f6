"""Tool calls that a model wrote as text instead of native ``tool_calls``: hold them back, parse them, or drop them.

Small models on servers without (working) native tool calling write ``<tool_call>{...}</tool_call>``,
``functions.speak:``, a bare JSON object, or the tool schema itself as their reply (measured on llama-cpp-python's
server, see ``research/local-models.md``). None of that may be shown or spoken as a companion's line:
:func:`looks_like_tool_text` says while streaming whether the text so far must be held back,
:func:`parse_text_tool_calls` turns what can be understood into :class:`ToolCall` values, and :func:`strip_tool_text`
is the last guard that leaves only prose.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic_core import from_json

from companions.common.untrusted_data import parse_json
from companions.llm.types import ToolCall, ToolSpec

# What a reply that is tool syntax or JSON starts with (after leading whitespace), case-folded.
_TOOL_STARTS: Final = ("{", "[", "<tool_call", "<tools", "<function", "functions.", "```", "✿function")

# Every piece of tool syntax the scanner reacts to; JSON is found separately (at "{" and "[").
_MARKER: Final = re.compile(
    r"(?P<wrap></?tool_call>?|</?tools>?|</function>|<\|im_start\|>\w*|<\|[a-z_]{2,20}\|>|✿RETURN✿\s*[:：]?)"
    r"|<function(?:=|\s+name=\"?)(?P<fname>[\w.-]+)\"?>?|<function>"
    r"|(?P<fence>```[\w-]*)"
    r"|(?<![\w.])functions\.(?P<dotted>[\w-]+)[ \t]*(?::|(?=\s*\{))"
    r"|✿FUNCTION✿\s*[:：]\s*(?P<qwen>[\w.-]+)|✿ARGS✿\s*[:：]?|(?P<result>✿RESULT✿)"
    r"|(?P<json>[{\[])",
    re.IGNORECASE,
)
# Where the plain-text argument of ``functions.speak:`` (or a hallucinated ✿RESULT✿) ends: the next tool syntax.
_NEXT_HEADER: Final = re.compile(r"<tool_call|<function|(?<![\w.])functions\.[\w-]+\s*:|✿", re.IGNORECASE)
_NAME_KEYS: Final = ("name", "function", "tool", "tool_name", "function_name", "action")
_ARGUMENT_KEYS: Final = ("arguments", "parameters", "args", "input", "tool_input", "params", "action_input")
_CALL_KEYS: Final = frozenset(("id", "type", "index", *_NAME_KEYS, *_ARGUMENT_KEYS))
_DECODER: Final = json.JSONDecoder()
# A bracket that opens JSON (or a Python literal) rather than prose: "{" or "[" then a quote, a bracket, or the end.
_JSON_START: Final = re.compile(r"[{\[]\s*(?:[\"'{\[]|\}|\]|$)")


@dataclass(frozen=True)
class TextToolParse:
    """What a reply written as text held: the tool calls it made, the prose left, and whether anything was dropped
    (the tool schema echoed back, calls of tools that were not offered, JSON that is no call)."""

    calls: tuple[ToolCall, ...]
    text: str
    discarded: bool


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


def parse_text_tool_calls(text: str, tools: Sequence[ToolSpec]) -> TextToolParse:
    """Recognises the tool calls a model wrote as text, keeping only calls of the offered ``tools``.

    Understood: ``<tool_call>{"name": .., "arguments": {..}}</tool_call>`` (one or several, closing tag optional),
    ``functions.speak:`` followed by JSON or by plain text (taken as the message), ``<function=speak>{..}``, Qwen's
    ``✿FUNCTION✿``/``✿ARGS✿``, a bare or code-fenced JSON call (``name``/``function``/``tool`` with ``arguments``/
    ``parameters``, arguments possibly a JSON string), a JSON list of calls, and a bare JSON object shaped like one
    tool's arguments (``{"message": "...", "emotion": "happy"}`` when ``speak`` is offered). JSON cut off by a token
    limit is read as far as it goes (pydantic's partial JSON: an open string kept, a cut escape, key or value not).
    Calls get the ids ``text_call_0``, ``text_call_1``, ...
    """
    scan = _Scan(text, {t.name: t for t in tools}, plain_as_prose=False)
    return scan.result()


def strip_tool_text(text: str) -> str:
    """The prose left after removing every tool-call, JSON and tool-schema fragment from ``text``.

    The last guard before anything is shown or spoken: plain text after ``functions.speak:`` stays (it is what the
    model meant to say); everything else that is tool syntax or JSON goes.
    """
    if not _MARKER.search(text):
        return text.strip()
    prose = _Scan(text, {}, plain_as_prose=True).result().text
    # Brackets that read as no JSON stay as prose; an object opening among them is no prose ("[[{" left "[{").
    while (left := _OBJECT_OPENING.sub("", prose)) != prose:
        prose = left
    return prose.strip()


_OBJECT_OPENING: Final = re.compile(r"\[\s*\{|\{\s*\"")


@dataclass
class _Scan:
    """One left-to-right pass over a reply: prose pieces, calls, and whether anything was dropped."""

    source: str
    offered: dict[str, ToolSpec]
    plain_as_prose: bool
    prose: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    discarded: bool = False
    pending: str | None = None  # the tool named by a header whose arguments come next
    in_tools: bool = False  # inside <tools>...</tools>: the schema echoed back, never a call

    def result(self) -> TextToolParse:
        pos = 0
        src = self.source
        while (m := _MARKER.search(src, pos)) is not None:
            self.prose.append(src[pos : m.start()])
            pos = self._handle(m)
        self.prose.append(src[pos:])
        if self.pending is not None:
            self._drop()  # a header with nothing after it
        return TextToolParse(tuple(self.calls), _tidy("".join(self.prose)), self.discarded)

    def _handle(self, m: re.Match[str]) -> int:
        src = self.source
        if m["json"] is not None:
            return self._json_at(m.start(), m.end())
        if m["fence"] is not None:
            close = src.find("```", m.end())
            end = len(src) if close < 0 else close + 3
            self._fenced(src[m.end() : close if close >= 0 else len(src)])
            return end
        if m["fname"] is not None or m["qwen"] is not None:
            self._set_pending(m["fname"] or m["qwen"])
            return m.end()
        if m["dotted"] is not None:
            self._set_pending(m["dotted"])
            return self._plain_argument(m.end())
        if m["result"] is not None:
            nxt = _NEXT_HEADER.search(src, m.end())
            self.discarded = True
            return len(src) if nxt is None else nxt.start()
        tag = m.group().casefold()
        if tag.startswith(("<tools", "</tools")):
            self.in_tools = tag.startswith("<tools")
        return m.end()  # a wrapper tag, a special token or ✿ARGS✿: nothing to keep

    def _json_at(self, start: int, after: int) -> int:
        src = self.source
        value, end = _decode(src, start)
        if end < 0:  # not JSON: an ordinary bracket in prose
            self.prose.append(src[start:after])
            return after
        if value is _BROKEN or self.in_tools:
            self._drop()
        elif isinstance(value, list) and self.pending is None and not any(isinstance(v, dict) for v in value):
            self.prose.append(src[start:end])  # "[1, 2]" or '["souta"]' inside a sentence is prose
        else:
            self._value(value)
        return end

    def _fenced(self, body: str) -> None:
        pos, found = 0, False
        while (brace := _first_bracket(body, pos)) >= 0:
            value, end = _decode(body, brace)
            if end < 0:
                break
            self._value(value)
            found, pos = True, end
        if not found or body[pos:].strip():
            self.discarded = True  # code, or JSON with other text: never a line

    def _plain_argument(self, start: int) -> int:
        """After ``functions.NAME:``: JSON arguments follow (left to the scanner), or plain text up to the next
        tool syntax, which is the message."""
        src = self.source
        rest = src[start:].lstrip()
        if rest.startswith(("{", "[", "```")) or not rest:
            return start
        nxt = _NEXT_HEADER.search(src, start)
        end = len(src) if nxt is None else nxt.start()
        name, self.pending = self.pending, None
        spec = self.offered.get(name or "")
        key = _message_key(spec) if spec is not None else None
        if spec is not None and key is not None:
            self._add_call(spec.name, {key: src[start:end].strip()})
        elif spec is not None and not self.plain_as_prose:
            self.discarded = True
        else:
            self.prose.append("\n" + src[start:end])
        return end

    def _set_pending(self, name: str) -> None:
        if self.pending is not None:
            self._drop()
        self.pending = name.removeprefix("functions.")

    def _value(self, value: object) -> None:
        if isinstance(value, list):
            for item in value:
                self._value(item)
            return
        if not isinstance(value, dict) or not self._call_from(value):
            self._drop()

    def _call_from(self, obj: dict[str, Any]) -> bool:
        """Adds the call ``obj`` stands for; False when it is none (a schema, an unknown tool, other JSON)."""
        pending, self.pending = self.pending, None
        nested = obj.get("function")
        if isinstance(nested, dict) and any(k in nested for k in ("name", *_ARGUMENT_KEYS)):
            return self._call_from(nested)
        name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
        if name is not None:
            args: object = next((obj[k] for k in _ARGUMENT_KEYS if k in obj), None)
            if args is None and "description" in obj:
                return False  # {"name": "speak", "description": ...}: a tool's schema
            if args is None:
                args = {k: v for k, v in obj.items() if k not in _CALL_KEYS}
        elif pending is not None:
            name, args = pending, obj
        else:
            return self._arguments_only(obj)
        if name.removeprefix("functions.") not in self.offered and pending is None and "arguments" not in obj:
            return self._arguments_only(obj)  # e.g. a tool whose own argument is called "name"
        if isinstance(args, str):
            args = _loads(args)
        name = name.removeprefix("functions.")
        spec = self.offered.get(name)
        if spec is None or not isinstance(args, dict) or _is_schema(args) or _is_schema(obj):
            return False
        self._add_call(name, args)
        return True

    def _arguments_only(self, obj: dict[str, Any]) -> bool:
        """A bare object shaped like one offered tool's arguments is a call of that tool."""
        if not obj or _is_schema(obj):
            return False
        best: tuple[int, str] | None = None
        for spec in self.offered.values():
            props = spec.parameters.get("properties") or {}
            required = set(spec.parameters.get("required") or ())
            if set(obj) <= set(props) and required <= set(obj) and (best is None or len(obj) > best[0]):
                best = (len(obj), spec.name)
        if best is None:
            return False
        self._add_call(best[1], obj)
        return True

    def _add_call(self, name: str, args: dict[str, Any]) -> None:
        arguments = json.dumps(args, ensure_ascii=False)
        self.calls.append(ToolCall(id=f"text_call_{len(self.calls)}", name=name, arguments=arguments))

    def _drop(self) -> None:
        self.pending = None
        self.discarded = True


class _Broken:
    """JSON that starts like JSON but cannot be read even after closing it."""


_BROKEN: Final = _Broken()


def _decode(src: str, start: int) -> tuple[object, int]:
    """The JSON value at ``start`` and where it ends; ``(_BROKEN, end)`` for something that is clearly meant as
    JSON but is broken (cut off or malformed; it runs to ``end``); ``(None, -1)`` for an ordinary bracket."""
    try:
        return _DECODER.raw_decode(src, start)
    except RecursionError:  # "[" x 100,000 from a model: broken, not a crash
        return _BROKEN, len(src)
    except ValueError:
        pass
    if not _JSON_START.match(src, start):
        return None, -1
    end = _balanced_end(src, start)
    if end >= 0:
        try:  # a Python literal ({'message': 'hi'}) is what some small models write
            return ast.literal_eval(src[start:end]), end
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return _BROKEN, end
    try:  # cut off by a token limit: pydantic reads it as far as it goes (an open string kept, a dangling key not)
        return from_json(src[start:], allow_partial="trailing-strings"), len(src)
    except ValueError:
        pass
    return _BROKEN, len(src)


def _balanced_end(src: str, start: int) -> int:
    """Where the bracket at ``start`` is closed (strings respected), or -1 when it never is."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(src)):
        ch = src[i]
        if in_string:
            escaped = not escaped and ch == "\\"
            if ch == '"' and not escaped:
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _loads(text: str) -> object:
    try:
        return parse_json(text)  # model output: nesting it cannot mean is no call (a RecursionError was not caught)
    except ValueError:
        return None


def _is_schema(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is (part of) a tool's JSON schema rather than values: the model echoed the tools back."""
    if obj.get("type") == "function" and isinstance(obj.get("function"), dict):
        return True
    if isinstance(obj.get("properties"), dict) or obj.get("type") == "object":
        return True
    params = obj.get("parameters")
    return isinstance(params, dict) and _is_schema(params)


def _message_key(spec: ToolSpec) -> str | None:
    """The argument that plain text after ``functions.NAME:`` fills: ``message``, else the one required string."""
    props: dict[str, Any] = spec.parameters.get("properties") or {}
    if "message" in props:
        return "message"
    required = [k for k in spec.parameters.get("required") or () if (props.get(k) or {}).get("type") == "string"]
    return required[0] if len(required) == 1 else None


def _first_bracket(text: str, pos: int) -> int:
    hits = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
    return min(hits) if hits else -1


def _line_start(src: str, index: int) -> bool:
    return not src[src.rfind("\n", 0, index) + 1 : index].strip()


def _tidy(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line).strip()
