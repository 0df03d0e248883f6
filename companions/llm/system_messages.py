"""Exactly one system message per request, first, whatever the caller built.

Chat templates such as chatml in llama-cpp-python keep only the FIRST system message and drop the rest silently
(docs/real-servers.md), and some templates refuse a system message anywhere but first. Madoi's prompts add system
messages late (vote and card-event instructions, guidance, closing), so the backend reshapes every request:
leading system messages are merged into one; a later system message becomes a paragraph marked
:data:`INSTRUCTIONS_MARK` of the user message right after it (before that user's text), else of the user message
right before it (after its text), else a user message of its own at its place. Nothing is lost and the order of
what the model reads is kept.

Consecutive user (or assistant) messages are left as they are: the templates measured accept them, and merging
them would lose the speaker names of a multi-party conversation.
"""

from __future__ import annotations

from typing import Final

from companions.llm.negotiation import append_text
from companions.llm.types import ChatMessage

INSTRUCTIONS_MARK: Final = "(Instructions)"


def with_one_system_message(messages: tuple[ChatMessage, ...]) -> tuple[ChatMessage, ...]:
    """``messages`` with at most one system message, first; see the module docstring."""
    later = [i for i, m in enumerate(messages) if m.role == "system"]
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    if len(later) == lead <= 1:
        return messages  # the common case, already fine: no copies
    out: list[ChatMessage] = []
    if lead:
        out.append(ChatMessage.system("\n\n".join(m.text for m in messages[:lead] if m.text)))
    pending: list[str] = []  # later system texts waiting for the next user message
    for index in range(lead, len(messages)):
        message = messages[index]
        if message.role == "system":
            if message.text:
                pending.append(f"{INSTRUCTIONS_MARK} {message.text}")
            continue
        if pending and message.role == "user":
            message = append_text(message, "\n\n".join(pending), before=True)
            pending = []
        elif pending:
            out.extend(_placed(out, pending))
            pending = []
        out.append(message)
    if pending:
        out.extend(_placed(out, pending))
    return tuple(out)


def _placed(out: list[ChatMessage], pending: list[str]) -> list[ChatMessage]:
    """Puts ``pending`` instructions into the user message ending ``out`` (returns nothing to add), or returns
    a new user message holding them."""
    text = "\n\n".join(pending)
    if out and out[-1].role == "user":
        out[-1] = append_text(out[-1], text)
        return []
    return [ChatMessage.user(text)]
