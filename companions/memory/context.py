"""Per-companion memory: what one companion heard while present, and what it said, within a token budget.

A companion's context never holds what it did not hear, and it never speaks for others: :func:`strip_impersonation`
removes the lines a model writes in someone else's name (``"Bob: ..."``) and its own name prefix. Memory is kept
in a :class:`MemoryStore` (SQLite in production, :class:`SqliteMemoryStore`) so that a restart remembers.

Memory follows the user's conversations: each entry is kept under the conversation it was heard in, and a memory
holds one conversation at a time (:meth:`CompanionMemory.follow`, called when the user starts, switches to or
reopens one), so a companion's prompt carries the conversation on the screen and nothing of the others. Deleting a
conversation forgets its entries (:meth:`CompanionMemory.forget_conversation`). The entries are kept per
conversation rather than rebuilt from the stored conversation because only the memory knows what each companion
heard: it was absent for some lines, was not addressed by others, and a trimmed memory stays trimmed. Conversation
ids are the app's; ``None`` is the memory of a companion used without conversations (tests, benches).

The store keeps every entry, also those trimmed out of the context: it is the record of who heard what, which
long-term recall (companions/memory/recall.py) searches through. Deleting a conversation, editing or deleting a message,
and the user's "forget" (:meth:`SqliteMemoryStore.forget_messages`, :meth:`SqliteMemoryStore.forget_companion`)
remove entries from it.
"""

from __future__ import annotations

import asyncio
import functools
import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Literal, Protocol

from companions.llm.types import ChatMessage
from companions.wire.protocol import Message

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


@dataclass(frozen=True)
class HeardLine:
    """A line a companion heard (or said), as its memory keeps it, with the conversation it was heard in."""

    entry: MemoryEntry
    conversation: int | None


CONTEXT_ROWS: Final = 2000  # entries loaded into a context at most (a 2,000-token context holds fewer)


def _entry(row: Sequence[object]) -> MemoryEntry:
    return MemoryEntry(int(str(row[0])), "said" if row[1] == "said" else "heard", str(row[2]), str(row[3]),
                       str(row[4]), str(row[5]), float(str(row[6])))


class MemoryStore(Protocol):
    """Where companions' memories live between runs, each entry under the conversation it was heard in."""

    async def append(self, companion_id: str, conversation: int | None, entry: MemoryEntry) -> None: ...

    async def load(self, companion_id: str, conversation: int | None) -> list[MemoryEntry]:
        """The newest entries of ``companion_id`` in ``conversation`` (at least a context's worth), oldest first."""
        ...

    async def last_seq(self, companion_id: str) -> int:
        """The highest sequence number ``companion_id`` used in any conversation (0 for none)."""
        ...

    async def forget_conversation(self, conversation: int) -> None:
        """Drops every companion's entries of ``conversation`` (it was deleted)."""
        ...

    async def revise(self, companion_id: str, message_id: str, text: str | None) -> None:
        """The entry of ``message_id`` gets ``text``, or goes when ``text`` is None."""
        ...

    async def forget_companion(self, companion_id: str) -> int:
        """Drops every entry of ``companion_id``; returns how many there were."""
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
    """One companion's remembered conversation (the one it follows), bounded by ``budget_tokens``."""

    def __init__(self, companion_id: str, *, budget_tokens: int = 2000, store: MemoryStore | None = None) -> None:
        self.companion_id = companion_id
        self.budget_tokens = budget_tokens
        self.store = store
        self.conversation: int | None = None  # the conversation whose entries this memory holds
        self._entries: list[MemoryEntry] = []
        self._tokens = 0
        self._next_seq = 1
        self._restored = False  # whether the entries are the store's of ``conversation``
        self._numbered = False  # whether ``_next_seq`` follows every number the store holds
        self._lock = asyncio.Lock()

    @property
    def entries(self) -> Sequence[MemoryEntry]:
        return tuple(self._entries)

    @property
    def tokens(self) -> int:
        return self._tokens

    async def load(self) -> None:
        """Restores the entries the store keeps of the conversation followed (within the budget), unless they
        were restored already."""
        async with self._lock:
            if not self._restored:
                await self._restore()

    async def follow(self, conversation: int) -> None:
        """Holds what this companion heard in ``conversation`` from now on: the user started it, switched to it or
        reopened it. What is heard from now on is remembered under it; the entries of the conversation left stay
        in the store for when the user comes back (without a store, they are gone)."""
        if conversation == self.conversation and self._restored:
            return
        self.conversation, self._restored = conversation, False  # at once: a line heard meanwhile belongs to it
        async with self._lock:
            if self._restored:
                return
            if self.store is None:
                self._entries, self._tokens = [], 0
            await self._restore()

    async def forget_conversation(self, conversation: int) -> None:
        """The user deleted ``conversation``: nothing of it is remembered any more, by this companion or (in the
        store) by any other."""
        async with self._lock:
            if self.store is not None:
                await self.store.forget_conversation(conversation)
            if conversation == self.conversation:
                self._entries, self._tokens = [], 0

    async def _restore(self) -> None:
        if self.store is not None:
            self._entries = await self.store.load(self.companion_id, self.conversation)
            self._tokens = sum(estimate_tokens(e.text) for e in self._entries)
            if not self._numbered:  # sequence numbers are the companion's, across its conversations and runs
                self._next_seq = max(self._next_seq, await self.store.last_seq(self.companion_id) + 1)
                self._numbered = True
        self._restored = True
        self._trim()

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
                await self.store.append(self.companion_id, self.conversation, entry)
            self._trim()
        return entry

    async def revise(self, message_id: str, text: str | None) -> bool:
        """The user edited (``text``) or deleted (None) a message: what this companion remembers follows, in its
        context and in the store (which keeps the lines trimmed out of the context too). Returns whether the
        context held that message."""
        async with self._lock:
            index = next((i for i, e in enumerate(self._entries) if e.message_id == message_id), None)
            if index is None:
                if self.store is not None:
                    await self.store.revise(self.companion_id, message_id, text)
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

    async def forget_everything(self) -> int:
        """The user erased what this companion remembers: its context and every entry in the store. Returns how
        many entries the store held."""
        async with self._lock:
            self._entries, self._tokens = [], 0
            if self.store is None:
                return 0
            return await self.store.forget_companion(self.companion_id)

    def _trim(self) -> None:
        """Drops the oldest entries from the context until it fits the budget (the store keeps them)."""
        while len(self._entries) > 1 and self._tokens > self.budget_tokens:
            self._tokens -= estimate_tokens(self._entries.pop(0).text)

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
    """A :class:`MemoryStore` in one SQLite file (WAL), used from executor threads so the loop never blocks.

    In Madoi's database (beside its ``conversations`` and ``messages`` tables), a memory table from before memories
    followed conversations is upgraded once: each entry goes under the conversation its message is stored in, and
    the entries whose message is stored nowhere (their conversation was deleted) are dropped. At every opening, the
    entries of a conversation no longer stored are dropped too (deleted while their companion was not running).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                _create_or_upgrade(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _run(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    async def append(self, companion_id: str, conversation: int | None, entry: MemoryEntry) -> None:
        await asyncio.to_thread(
            self._run,
            "INSERT OR REPLACE INTO companion_memory (companion_id, seq, role, speaker_id, speaker_name, text,"
            " message_id, at, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (companion_id, entry.seq, entry.role, entry.speaker_id, entry.speaker_name, entry.text,
             entry.message_id, entry.at, conversation),
        )

    async def load(self, companion_id: str, conversation: int | None) -> list[MemoryEntry]:
        rows = await asyncio.to_thread(
            self._run,
            "SELECT seq, role, speaker_id, speaker_name, text, message_id, at FROM companion_memory"
            " WHERE companion_id = ? AND conversation_id IS ? ORDER BY seq DESC LIMIT ?",
            (companion_id, conversation, CONTEXT_ROWS),
        )
        return [_entry(r) for r in reversed(rows)]

    async def heard(self, companion_id: str, message_ids: Collection[str]) -> dict[str, HeardLine]:
        """The lines among ``message_ids`` that ``companion_id`` heard (or said), in their current words."""
        ids = list(dict.fromkeys(message_ids))
        found: dict[str, HeardLine] = {}
        for start in range(0, len(ids), 500):  # within SQLite's limit on bound parameters
            part = ids[start : start + 500]
            rows = await asyncio.to_thread(
                self._run,
                "SELECT seq, role, speaker_id, speaker_name, text, message_id, at, conversation_id FROM"
                f" companion_memory WHERE companion_id = ? AND message_id IN ({','.join('?' * len(part))})",
                (companion_id, *part),
            )
            for r in rows:
                found[str(r[5])] = HeardLine(_entry(r), None if r[7] is None else int(str(r[7])))
        return found

    async def remembered(self, companion_id: str, *, containing: str = "", limit: int = 200,
                         before_seq: int | None = None) -> list[HeardLine]:
        """What ``companion_id`` remembers, newest first (``limit`` lines from ``before_seq`` down), only lines
        containing ``containing`` (case-insensitive) when given: the Memory view's list."""
        sql = ("SELECT seq, role, speaker_id, speaker_name, text, message_id, at, conversation_id FROM"
               " companion_memory WHERE companion_id = ?")
        args: list[object] = [companion_id]
        if containing.strip():
            sql += " AND instr(lower(text), ?) > 0"
            args.append(containing.strip().lower())
        if before_seq is not None:
            sql += " AND seq < ?"
            args.append(before_seq)
        rows = await asyncio.to_thread(self._run, sql + " ORDER BY seq DESC LIMIT ?", (*args, limit))
        return [HeardLine(_entry(r), None if r[7] is None else int(str(r[7]))) for r in rows]

    async def count(self, companion_id: str) -> int:
        rows = await asyncio.to_thread(self._run, "SELECT COUNT(*) FROM companion_memory WHERE companion_id = ?",
                                       (companion_id,))
        return int(str(rows[0][0]))

    async def append_many(self, companion_id: str, conversation: int | None, entries: Sequence[MemoryEntry]) -> None:
        """Stores ``entries`` at once (an imported conversation: one transaction)."""
        rows = [(companion_id, e.seq, e.role, e.speaker_id, e.speaker_name, e.text, e.message_id, e.at, conversation)
                for e in entries]

        def write() -> None:
            with self._lock:
                self._conn.execute("BEGIN")
                try:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO companion_memory (companion_id, seq, role, speaker_id, speaker_name,"
                        " text, message_id, at, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise

        await asyncio.to_thread(write)

    async def forget_messages(self, companion_id: str, message_ids: Collection[str]) -> int:
        """``companion_id`` no longer remembers these lines (the user said forget). Returns how many went."""
        ids = list(dict.fromkeys(message_ids))
        gone = 0
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = await asyncio.to_thread(
                self._run, f"DELETE FROM companion_memory WHERE companion_id = ? AND message_id IN"
                f" ({','.join('?' * len(part))}) RETURNING 1", (companion_id, *part))
            gone += len(rows)
        return gone

    async def forget_companion(self, companion_id: str) -> int:
        """``companion_id`` remembers nothing any more (the user said forget everything)."""
        rows = await asyncio.to_thread(self._run, "DELETE FROM companion_memory WHERE companion_id = ? RETURNING 1",
                                       (companion_id,))
        return len(rows)

    async def last_seq(self, companion_id: str) -> int:
        rows = await asyncio.to_thread(self._run, "SELECT MAX(seq) FROM companion_memory WHERE companion_id = ?",
                                       (companion_id,))
        return int(str(rows[0][0])) if rows and rows[0][0] is not None else 0

    async def forget_conversation(self, conversation: int) -> None:
        await asyncio.to_thread(self._run, "DELETE FROM companion_memory WHERE conversation_id = ?", (conversation,))

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


def _create_or_upgrade(conn: sqlite3.Connection) -> None:
    """Creates the memory table, or gives one from before conversations their column, and drops the entries of
    deleted conversations (see SqliteMemoryStore)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS companion_memory (companion_id TEXT NOT NULL, seq INTEGER NOT NULL,"
        " role TEXT NOT NULL, speaker_id TEXT NOT NULL, speaker_name TEXT NOT NULL, text TEXT NOT NULL,"
        " message_id TEXT NOT NULL, at REAL NOT NULL, conversation_id INTEGER, PRIMARY KEY (companion_id, seq))"
    )
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(companion_memory)")}
    if "conversation_id" not in columns:
        conn.execute("ALTER TABLE companion_memory ADD COLUMN conversation_id INTEGER")
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages'").fetchone():
            conn.execute("UPDATE companion_memory SET conversation_id = (SELECT MIN(m.conversation_id) FROM messages m"
                         " WHERE m.id = companion_memory.message_id)")
            conn.execute("DELETE FROM companion_memory WHERE conversation_id IS NULL")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'conversations'").fetchone():
        conn.execute("DELETE FROM companion_memory WHERE conversation_id NOT IN (SELECT id FROM conversations)")
    conn.execute("CREATE INDEX IF NOT EXISTS companion_memory_by_conversation"
                 " ON companion_memory (companion_id, conversation_id, seq)")
    conn.execute("CREATE INDEX IF NOT EXISTS companion_memory_of_conversation ON companion_memory (conversation_id)")
    conn.execute("CREATE INDEX IF NOT EXISTS companion_memory_by_message"
                 " ON companion_memory (companion_id, message_id)")
