"""Notes about the user, written while the model server is idle: consolidation of long-term memory.

When a conversation has ended and stayed quiet for a while (as prompt warming waits: conversation/warming.py), each
companion with memory on may write a few short notes about the user from the lines it heard in that conversation
(facts, preferences, plans), each citing the lines it comes from; the request goes at ``priorities.NOTES``, below
every turn and every warm-up, so it never delays a reply (llm/gate.py). Recall (companions/memory/recall.py) finds notes
beside the lines: a note states in one sentence what several lines say.

A note never outlives the lines it came from: it cites their message ids, recall keeps a note only while the
companion still remembers every one of them, and the store drops it when one is edited, deleted or forgotten
(app/memory/notes.py). What the model writes is untrusted: a note citing no line of the conversation, none of the
user's lines, or holding an instruction-like text is dropped; a reply that is no valid list is no notes.

Off by default (``conversation.memory_notes``): whether notes help recall is measured first (docs/ARCHITECTURE.md,
"Memory").
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel, Field

from companions.llm import priorities
from companions.llm.priorities import AtPriority
from companions.llm.structured import generate_structured
from companions.llm.types import ChatMessage, ChatModel
from companions.memory.context import MemoryEntry

log = logging.getLogger(__name__)

NOTES_MAX_TOKENS: Final = 400
MAX_NOTES: Final = 5
NOTE_CHARS: Final = 160
LINES_PER_REQUEST: Final = 60  # the newest lines of a conversation (a small model's context stays short)
NoteKind = Literal["fact", "preference", "plan"]

_INSTRUCTIONS: Final = {
    "en": ("Below are lines of a conversation, numbered, with their dates. Write at most {n} short notes about "
           "{user}: facts about them, what they like or dislike, and their plans, each with its date (\"on 8 May "
           "2023\") and the numbers of the lines it comes from. Only what {user} said or agreed to; nothing "
           "invented. Answer with JSON."),
    "ja": ("以下は会話の行です（番号と日付つき）。{user}についての短いメモを最大{n}個書いてください。{user}に関する"
           "事実、好きなことや苦手なこと、予定を、それぞれ日付（「2023年5月8日」）と、もとになった行の番号つきで。"
           "{user}が言ったこと、同意したことだけを書き、推測はしません。JSONで答えてください。"),
}


class NoteDraft(BaseModel):
    """One note as the model writes it (lines: the numbers of the lines it comes from)."""

    text: str = Field(json_schema_extra={"maxLength": NOTE_CHARS})
    kind: NoteKind = "fact"
    lines: list[int] = Field(default_factory=list, json_schema_extra={"maxItems": 8})


class NotesDraft(BaseModel):
    notes: list[NoteDraft] = Field(default_factory=list, json_schema_extra={"maxItems": MAX_NOTES})


@dataclass(frozen=True)
class Note:
    """A note about the user: what it says, when (its newest line's time), and the lines (message ids) it cites."""

    companion_id: str
    conversation: int | None
    text: str
    kind: NoteKind
    at: float
    sources: tuple[str, ...]


def _date(at: float, language: str) -> str:
    day = dt.datetime.fromtimestamp(at)
    return f"{day.year}-{day.month:02d}-{day.day:02d}"


def notes_prompt(lines: Sequence[MemoryEntry], *, user_id: str, user_name: str, language: str) -> list[ChatMessage]:
    """The request: the instructions, then the numbered, dated lines (the user's marked as theirs)."""
    numbered = "\n".join(f"{n}. [{_date(e.at, language)}] {user_name if e.speaker_id == user_id else e.speaker_name}:"
                         f" {e.text}" for n, e in enumerate(lines, start=1))
    instructions = _INSTRUCTIONS["ja" if language == "ja" else "en"].format(n=MAX_NOTES, user=user_name)
    return [ChatMessage.system(instructions), ChatMessage.user(numbered)]


_SUSPECT: Final = ("ignore", "instruction", "system prompt", "指示", "無視")


def accepted(draft: NoteDraft, lines: Sequence[MemoryEntry], user_id: str) -> tuple[str, ...] | None:
    """The message ids a drafted note cites, or None when it is not a note to keep: empty, too long, instruction-
    like, citing no line of the conversation or none of the user's own."""
    text = " ".join(draft.text.split())
    if not text or len(text) > NOTE_CHARS or any(word in text.lower() for word in _SUSPECT):
        return None
    cited = [lines[n - 1] for n in dict.fromkeys(draft.lines) if 1 <= n <= len(lines)]
    if not any(e.speaker_id == user_id for e in cited):
        return None
    return tuple(e.message_id for e in cited)


async def write_notes(model: ChatModel, companion_id: str, conversation: int | None, lines: Sequence[MemoryEntry],
                      *, user_id: str, user_name: str, language: str) -> list[Note]:
    """Asks ``model`` (at the lowest priority) for notes about the user from ``lines`` (the newest
    ``LINES_PER_REQUEST``); only notes that pass :func:`accepted` come back."""
    lines = list(lines)[-LINES_PER_REQUEST:]
    if not any(e.speaker_id == user_id for e in lines):
        return []
    draft = await generate_structured(AtPriority(model, priorities.NOTES),
                                      notes_prompt(lines, user_id=user_id, user_name=user_name, language=language),
                                      NotesDraft, default=NotesDraft(), name="memory_notes",
                                      max_tokens=NOTES_MAX_TOKENS)
    notes: list[Note] = []
    by_id = {e.message_id: e for e in lines}
    for item in draft.notes[:MAX_NOTES]:
        sources = accepted(item, lines, user_id)
        if sources is None:
            log.info("%s: a note was left out: %r", companion_id, item.text[:80])
            continue
        notes.append(Note(companion_id, conversation, " ".join(item.text.split()), item.kind,
                          max(by_id[s].at for s in sources), sources))
    return notes
