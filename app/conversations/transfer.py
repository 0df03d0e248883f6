"""Conversations in and out of Madoi: the documented JSON Lines format, and SillyTavern chat files.

Madoi's format (``madoi conversations export FILE`` writes it, ``madoi conversations import FILE`` reads it) is one
conversation per line::

    {"title": str, "messages": [{"id": str, "from": str, "to": [str], "message": str, "time": ISO-8601}]}

``from`` and ``to`` are ``"user"`` (the person using Madoi) or companion ids; an empty ``to`` is a message to
everyone in the conversation. An imported conversation is stored at its messages' times, indexed for search, and
remembered as if it had been said: each companion in it (anyone named in a ``from`` or ``to``) hears the lines
addressed to it or to everyone, so long-term recall (companions/memory/recall.py) finds them, dated. Every stored
message and memory of it is marked *imported*: whatever its ``from`` says, nobody said it in this app, so a recalled
imported line is untrusted text (a turn whose prompt holds one may not use the camera or the user's files unasked).

A SillyTavern chat file (``.jsonl``: a header line with ``user_name`` and ``character_name``, then one line per
message with ``name``, ``is_user``, ``send_date``, ``mes``) is imported into one companion's memory
(``--companion ID``): the user's lines as the user's, the character's as that companion's.

Everything read is untrusted: a line that is not valid (not JSON, nested too deep, longer than
:data:`MAX_LINE_CHARS`) is reported with its number and skipped, the others are imported, one conversation at a
time; a conversation imported before (its first message id is stored) is skipped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, TextIO

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from app.memory.store import SqliteMemoryStore
from app.storage.database import ConversationStore
from companions.common.untrusted_data import Unreadable, parse_json
from companions.memory.context import MemoryEntry
from companions.search.engine import SearchEngine
from companions.search.index import IndexedLine
from companions.wire.protocol import Message

USER: str = "user"  # the user's id in the file format
MAX_MESSAGE_CHARS = 20_000
MAX_LINE_CHARS = 64 * 1024 * 1024  # a whole conversation of Madoi's is one line: a year of talk is a few MB
Id = Annotated[str, StringConstraints(min_length=1, max_length=128, strip_whitespace=True)]


class TransferMessage(BaseModel):
    """One message of the file format."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: Id
    from_: Id = Field(alias="from")
    to: list[Id] = Field(default_factory=list, max_length=64)
    message: Annotated[str, StringConstraints(max_length=MAX_MESSAGE_CHARS)]
    time: dt.datetime

    @field_validator("time")
    @classmethod
    def _aware(cls, value: dt.datetime) -> dt.datetime:
        return value if value.tzinfo is not None else value.astimezone()  # a time without a zone is local


class TransferConversation(BaseModel):
    """One line of the file format."""

    model_config = ConfigDict(extra="ignore")

    title: Annotated[str, StringConstraints(max_length=200)] = ""
    messages: list[TransferMessage] = Field(min_length=1, max_length=200_000)


@dataclass
class ImportReport:
    """What an import did: conversations stored, those skipped as imported before, and each problem."""

    imported: list[int] = field(default_factory=list)
    lines: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)


class OverlongLine(str):
    """A line longer than :data:`MAX_LINE_CHARS`, read past and never held: the readers skip it with its reason."""


def bounded_lines(file: TextIO, max_chars: int = MAX_LINE_CHARS) -> Iterator[str]:
    """The lines of ``file``, each read up to ``max_chars`` characters; a longer one is an :class:`OverlongLine`
    (its rest is read in pieces and dropped), so one huge line cannot take the memory of the import."""
    while line := file.readline(max_chars + 1):
        if len(line) <= max_chars or line.endswith("\n"):
            yield line
            continue
        while (rest := file.readline(max_chars + 1)) and not rest.endswith("\n"):
            pass
        yield OverlongLine()


def _overlong(number: int, line: str, report: ImportReport) -> bool:
    if isinstance(line, OverlongLine):
        report.problems.append(f"line {number}: longer than {MAX_LINE_CHARS:,} characters: skipped")
        return True
    return False


def read_jsonl(lines: Iterable[str], report: ImportReport) -> Iterator[TransferConversation]:
    """The valid conversations of a Madoi JSON Lines file; each bad line becomes a problem of ``report``."""
    for number, line in enumerate(lines, start=1):
        if _overlong(number, line, report) or not line.strip():
            continue
        try:
            yield TransferConversation.model_validate_json(line)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            report.problems.append(f"line {number}: {where + ': ' if where else ''}{first['msg']}")


def read_sillytavern(lines: Iterable[str], companion_id: str, report: ImportReport,
                     title: str = "") -> TransferConversation | None:
    """A SillyTavern chat file as one conversation between the user and ``companion_id``."""
    messages: list[TransferMessage] = []
    header: dict[str, Any] = {}
    last_time: dt.datetime | None = None
    for number, line in enumerate(lines, start=1):
        if _overlong(number, line, report) or not line.strip():
            continue
        try:
            item = parse_json(line)
        except Unreadable as exc:  # one bad line (not JSON, or nested past any message's depth) is skipped
            report.problems.append(f"line {number}: {exc}")
            continue
        if not isinstance(item, dict):
            report.problems.append(f"line {number}: not a JSON object")
            continue
        if number == 1 and "mes" not in item:
            header = item
            last_time = _st_time(item.get("create_date"))
            continue
        if item.get("is_system") or not isinstance(item.get("mes"), str):
            continue
        at = _st_time(item.get("send_date")) or last_time
        if at is None:
            report.problems.append(f"line {number}: no readable send_date")
            continue
        last_time = at
        speaker = USER if item.get("is_user") else companion_id
        to = [companion_id] if speaker == USER else [USER]
        try:
            messages.append(TransferMessage.model_validate(
                {"id": f"st-{_st_key(header)}-{number}", "from": speaker, "to": to, "message": item["mes"],
                 "time": at}))
        except ValidationError as exc:
            report.problems.append(f"line {number}: {exc.errors()[0]['msg']}")
    if not messages:
        report.problems.append("no messages found in the SillyTavern chat")
        return None
    name = str(header.get("character_name") or companion_id)
    return TransferConversation(title=title or f"SillyTavern: {name}"[:200], messages=messages)


def _st_key(header: dict[str, Any]) -> str:
    """A stable part of imported message ids: the same chat file imported twice is recognised."""
    key = f"{header.get('create_date')}\n{header.get('character_name')}\n{header.get('user_name')}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


_ST_FORMATS = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%b %d, %Y %I:%M%p", "%Y-%m-%d @%Hh %Mm %Ss %fms",
               "%Y-%m-%d@%Hh%Mm%Ss", "%Y-%m-%d %H:%M:%S")


def _st_time(value: object) -> dt.datetime | None:
    """SillyTavern's send dates: epoch milliseconds, ISO-8601, or its humanized "May 8, 2023 1:56pm"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return dt.datetime.fromtimestamp(value / 1000 if value > 1e11 else value, dt.UTC)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return parsed if parsed.tzinfo is not None else parsed.astimezone()
    except ValueError:
        pass
    for form in _ST_FORMATS:
        try:
            return dt.datetime.strptime(text, form).astimezone()
        except ValueError:
            continue
    return None


class ConversationImporter:
    """Stores, remembers and indexes imported conversations.

    ``user_id`` is the app's id of the user (the settings' user name), which ``"user"`` in a file stands for;
    ``names`` gives a speaker's name for its id (companions' from their cards), for the memory and the index.
    """

    def __init__(self, store: ConversationStore, memory: SqliteMemoryStore, engine: SearchEngine | None, *,
                 user_id: str, names: dict[str, str]) -> None:
        self.store = store
        self.memory = memory
        self.engine = engine
        self.user_id = user_id
        self.names = names

    def _app_id(self, file_id: str) -> str:
        return self.user_id if file_id == USER else file_id

    def _name(self, app_id: str) -> str:
        return self.names.get(app_id, app_id)

    async def add(self, conversation: TransferConversation, report: ImportReport) -> int | None:
        """Imports one conversation; None when it was imported before."""
        if await self.store.conversation_of(conversation.messages[0].id) is not None:
            report.skipped += 1
            return None
        timed = [(Message.model_validate({"params": {"id": m.id, "from": self._app_id(m.from_),
                                                     "to": [self._app_id(t) for t in m.to],
                                                     "message": m.message}}),
                  m.time.timestamp()) for m in conversation.messages]
        conversation_id = await self.store.import_conversation(conversation.title, timed)
        await self._remember(conversation_id, timed)
        if self.engine is not None:
            await self.engine.index_conversation(str(conversation_id), [
                IndexedLine(m.params.id, m.params.from_, at, f"{self._name(m.params.from_)}: {m.params.message}")
                for m, at in timed])
        report.imported.append(conversation_id)
        report.lines += len(timed)
        return conversation_id

    async def _remember(self, conversation_id: int, timed: Sequence[tuple[Message, float]]) -> None:
        """Each companion of the conversation hears what was addressed to it or to everyone, and its own lines."""
        companions = {who for m, _ in timed for who in (m.params.from_, *m.params.to) if who != self.user_id}
        for companion in sorted(companions):
            seq = await self.memory.last_seq(companion)
            entries: list[MemoryEntry] = []
            for message, at in timed:
                p = message.params
                if p.from_ != companion and p.to and companion not in p.to:
                    continue
                seq += 1
                entries.append(MemoryEntry(seq, "said" if p.from_ == companion else "heard", p.from_,
                                           self._name(p.from_), p.message, p.id, at, imported=True))
            await self.memory.append_many(companion, conversation_id, entries)


async def export_lines(store: ConversationStore, user_id: str) -> list[str]:
    """Every stored conversation, oldest first, as lines of the file format (the user's id written ``"user"``)."""

    def file_id(app_id: str) -> str:
        return USER if app_id == user_id else app_id

    out: list[str] = []
    for info in reversed(await store.list_conversations()):
        stored = await store.messages(info.id)
        if not stored:
            continue
        messages = [{"id": s.message.params.id, "from": file_id(s.message.params.from_),
                     "to": [file_id(t) for t in s.message.params.to], "message": s.message.params.message,
                     "time": dt.datetime.fromtimestamp(s.created_at, dt.UTC).isoformat().replace("+00:00", "Z")}
                    for s in stored]
        out.append(json.dumps({"title": info.title, "messages": messages}, ensure_ascii=False))
    return out
