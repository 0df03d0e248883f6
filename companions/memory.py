"""Per-companion memory: what one companion heard while present, and what it said, within a token budget.

A companion's context never holds what it did not hear, and it never speaks for others: :func:`strip_impersonation`
removes the lines a model writes in someone else's name (``"Bob: ..."``) and its own name prefix. Memory is kept
in a :class:`MemoryStore` (SQLite in production, :class:`SqliteMemoryStore`) so that a restart remembers.
"""

from __future__ import annotations

import asyncio
import functools
import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Literal, Protocol

from companions.llm.types import ChatMessage
from companions.protocol import Message

EntryRole = Literal["heard", "said"]


@dataclass(frozen=True)
class MemoryEntry:
    seq: int
    role: EntryRole
    speaker_id: str
    speaker_name: str
    text: str
    message_id: str = ""
    at: float = 0.0


class MemoryStore(Protocol):
    """Where a companion's memory lives between runs."""

    async def append(self, companion_id: str, entry: MemoryEntry) -> None: ...

    async def load(self, companion_id: str) -> list[MemoryEntry]:
        """Every kept entry of ``companion_id``, oldest first."""
        ...

    async def forget_before(self, companion_id: str, seq: int) -> None:
        """Drops the entries with a sequence number below ``seq``."""
        ...

    async def revise(self, companion_id: str, message_id: str, text: str | None) -> None:
        """The entry of ``message_id`` gets ``text``, or goes when ``text`` is None."""
        ...


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: one per CJK character, about four characters per token otherwise."""
    wide = sum(1 for ch in text if unicodedata.east_asian_width(ch) in ("W", "F"))
    return wide + (len(text) - wide + 3) // 4 + 1


# The parts of a speaker label around a name: "- **Akari**:", "[souta]", "【ひな】", "あかり (id: akari):",
# "Akari (akari):", "Hina says:", "ひなは言った：", "ひなちゃん：".
_LABEL_OPEN: Final = r"(?:[-*>]\s+)?(?:\*\*|__)?[\[【(（]?\s*"
_LABEL_AFTER_NAME: Final = (
    r"(?![A-Za-z0-9_])(?:さん|ちゃん|くん|君|様|-(?:san|chan|kun))?"
    r"(?:\s*[(（]\s*(?:id\s*[:：=]\s*)?[\w.-]+\s*[)）])?"
    r"(?:\s+(?:says|said|replies|replied|asks|asked|answers|answered|adds|added)"
    r"|[はが](?:言った|言う|言いました|答えた|答えました|言って))?"
    r"\s*[\]】)）]?(?:\*\*|__)?"
    r"(?:\s*(?:\*\*|__)?[:：](?:\*\*|__)?|(?<=[\]】]))\s*"
)


def name_label(names: Iterable[str]) -> str | None:
    """A regular expression (unanchored) for a speaker label naming one of ``names``, or None for no names."""
    cleaned = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
    if not cleaned:
        return None
    alternatives = "|".join(re.escape(n) for n in cleaned)
    return rf"{_LABEL_OPEN}(?:{alternatives}){_LABEL_AFTER_NAME}"


@functools.lru_cache(maxsize=64)
def _name_prefix(names: frozenset[str]) -> re.Pattern[str] | None:
    label = name_label(names)
    return None if label is None else re.compile(rf"^\s*{label}", re.IGNORECASE)


def strip_impersonation(text: str, own_names: Iterable[str], other_names: Iterable[str]) -> str:
    """Removes what a model wrote for others, and its own ``"Name:"`` prefixes.

    A line starting with another speaker's label (``Bob:``, ``**Bob**:``, ``[bob]``, ``Bob (id: bob):``,
    ``Bob says:``) opens that speaker's block, which lasts until a line starting with one of ``own_names``; those
    blocks are dropped. Own labels are removed (repeated ones too: ``Akari: Akari (akari): Hi``).
    """
    own = _name_prefix(frozenset(own_names))
    other = _name_prefix(frozenset(other_names))
    kept: list[str] = []
    in_other = False
    for line in text.splitlines():
        if own is not None and own.match(line):
            in_other = False
            rest = line
            while (m := own.match(rest)) is not None and m.end() > 0:
                rest = rest[m.end() :]
            kept.append(rest)
        elif other is not None and other.match(line):
            in_other = True
        elif not in_other:
            kept.append(line)
    return "\n".join(kept).strip()


class CompanionMemory:
    """One companion's remembered conversation, bounded by ``budget_tokens``."""

    def __init__(self, companion_id: str, *, budget_tokens: int = 2000, store: MemoryStore | None = None) -> None:
        self.companion_id = companion_id
        self.budget_tokens = budget_tokens
        self.store = store
        self._entries: list[MemoryEntry] = []
        self._tokens = 0
        self._next_seq = 1
        self._lock = asyncio.Lock()

    @property
    def entries(self) -> Sequence[MemoryEntry]:
        return tuple(self._entries)

    @property
    def tokens(self) -> int:
        return self._tokens

    async def load(self) -> None:
        """Restores the entries kept by the store (within the budget)."""
        if self.store is None:
            return
        async with self._lock:
            self._entries = await self.store.load(self.companion_id)
            self._tokens = sum(estimate_tokens(e.text) for e in self._entries)
            self._next_seq = max((e.seq for e in self._entries), default=0) + 1
            await self._trim()

    async def remember(self, message: Message, speaker_name: str) -> MemoryEntry:
        """Records ``message``: as said when it is this companion's own, as heard otherwise."""
        p = message.params
        role: EntryRole = "said" if p.from_ == self.companion_id else "heard"
        async with self._lock:
            entry = MemoryEntry(self._next_seq, role, p.from_, speaker_name, p.message, p.id, time.time())
            self._next_seq += 1
            self._entries.append(entry)
            self._tokens += estimate_tokens(entry.text)
            if self.store is not None:
                await self.store.append(self.companion_id, entry)
            await self._trim()
        return entry

    async def revise(self, message_id: str, text: str | None) -> bool:
        """The user edited (``text``) or deleted (None) a message: what this companion remembers follows.
        Returns whether it remembered that message at all."""
        async with self._lock:
            index = next((i for i, e in enumerate(self._entries) if e.message_id == message_id), None)
            if index is None:
                return False
            old = self._entries[index]
            self._tokens -= estimate_tokens(old.text)
            if text is None:
                del self._entries[index]
            else:
                self._entries[index] = replace(old, text=text)
                self._tokens += estimate_tokens(text)
            if self.store is not None:
                await self.store.revise(self.companion_id, message_id, text)
        return True

    async def _trim(self) -> None:
        dropped = 0
        while len(self._entries) > 1 and self._tokens > self.budget_tokens:
            self._tokens -= estimate_tokens(self._entries.pop(0).text)
            dropped += 1
        if dropped and self.store is not None:
            await self.store.forget_before(self.companion_id, self._entries[0].seq)

    def as_messages(self) -> list[ChatMessage]:
        """The memory as chat messages: others as named user lines, this companion's own words as assistant."""
        messages: list[ChatMessage] = []
        for e in self._entries:
            if e.role == "said":
                messages.append(ChatMessage.assistant(e.text))
            else:
                messages.append(ChatMessage.user(f"{e.speaker_name} (id: {e.speaker_id}): {e.text}"))
        return messages


class SqliteMemoryStore:
    """A :class:`MemoryStore` in one SQLite file (WAL), used from executor threads so the loop never blocks."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS companion_memory (companion_id TEXT NOT NULL, seq INTEGER NOT NULL,"
                " role TEXT NOT NULL, speaker_id TEXT NOT NULL, speaker_name TEXT NOT NULL, text TEXT NOT NULL,"
                " message_id TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (companion_id, seq))"
            )

    def _run(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    async def append(self, companion_id: str, entry: MemoryEntry) -> None:
        await asyncio.to_thread(
            self._run,
            "INSERT OR REPLACE INTO companion_memory VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (companion_id, entry.seq, entry.role, entry.speaker_id, entry.speaker_name, entry.text,
             entry.message_id, entry.at),
        )

    async def load(self, companion_id: str) -> list[MemoryEntry]:
        rows = await asyncio.to_thread(
            self._run,
            "SELECT seq, role, speaker_id, speaker_name, text, message_id, at FROM companion_memory"
            " WHERE companion_id = ? ORDER BY seq",
            (companion_id,),
        )
        return [
            MemoryEntry(int(str(r[0])), "said" if r[1] == "said" else "heard", str(r[2]), str(r[3]), str(r[4]),
                        str(r[5]), float(str(r[6])))
            for r in rows
        ]

    async def forget_before(self, companion_id: str, seq: int) -> None:
        await asyncio.to_thread(
            self._run, "DELETE FROM companion_memory WHERE companion_id = ? AND seq < ?", (companion_id, seq)
        )

    async def revise(self, companion_id: str, message_id: str, text: str | None) -> None:
        if text is None:
            await asyncio.to_thread(self._run, "DELETE FROM companion_memory WHERE companion_id = ? AND message_id = ?",
                                    (companion_id, message_id))
        else:
            await asyncio.to_thread(self._run, "UPDATE companion_memory SET text = ? WHERE companion_id = ? AND"
                                    " message_id = ?", (text, companion_id, message_id))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
