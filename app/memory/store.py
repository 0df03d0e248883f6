"""Companions' memories in Madoi's database: the ``companion_memory`` table (app/storage/schema.py) behind the
core's memory port (companions/memory/context.py).

Beyond the port, the app reads and changes what companions remember here: recall checks who heard a line
(:meth:`SqliteMemoryStore.heard`), the Memory view lists and forgets (:meth:`SqliteMemoryStore.remembered`,
:meth:`SqliteMemoryStore.forget_messages`), and an imported conversation is remembered at once
(:meth:`SqliteMemoryStore.append_many`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Collection, Sequence
from pathlib import Path

from app.storage.schema import open_database
from companions.memory.context import CONTEXT_ROWS, HeardLine, MemoryEntry

ENTRY_COLUMNS = "seq, role, speaker_id, speaker_name, text, message_id, at, imported"  # as _entry reads them


def _entry(row: Sequence[object]) -> MemoryEntry:
    return MemoryEntry(int(str(row[0])), "said" if row[1] == "said" else "heard", str(row[2]), str(row[3]),
                       str(row[4]), str(row[5]), float(str(row[6])), imported=bool(row[7]))


class SqliteMemoryStore:
    """The core's :class:`~companions.memory.context.MemoryStore` on Madoi's database, used from executor threads
    so the loop never blocks.

    The database is migrated on opening (app/storage/schema.py: the memory table of an earlier Madoi is taken as it
    is, or upgraded once). At every opening, the entries of a conversation no longer stored are dropped (deleted
    while their companion was not running: a card gone, another process, a crash between the two deletions).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = open_database(path)
        self._lock = threading.Lock()
        with self._lock:
            self._conn.execute("DELETE FROM companion_memory WHERE conversation_id IS NOT NULL"
                               " AND conversation_id NOT IN (SELECT id FROM conversations)")

    def _run(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    async def append(self, companion_id: str, conversation: int | None, entry: MemoryEntry) -> None:
        await asyncio.to_thread(
            self._run,
            "INSERT OR REPLACE INTO companion_memory (companion_id, seq, role, speaker_id, speaker_name, text,"
            " message_id, at, conversation_id, imported) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (companion_id, entry.seq, entry.role, entry.speaker_id, entry.speaker_name, entry.text,
             entry.message_id, entry.at, conversation, entry.imported),
        )

    async def load(self, companion_id: str, conversation: int | None) -> list[MemoryEntry]:
        rows = await asyncio.to_thread(
            self._run,
            f"SELECT {ENTRY_COLUMNS} FROM companion_memory"
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
                f"SELECT {ENTRY_COLUMNS}, conversation_id FROM"
                f" companion_memory WHERE companion_id = ? AND message_id IN ({','.join('?' * len(part))})",
                (companion_id, *part),
            )
            for r in rows:
                found[str(r[5])] = HeardLine(_entry(r), None if r[8] is None else int(str(r[8])))
        return found

    async def remembered(self, companion_id: str, *, containing: str = "", limit: int = 200,
                         before_seq: int | None = None) -> list[HeardLine]:
        """What ``companion_id`` remembers, newest first (``limit`` lines from ``before_seq`` down), only lines
        containing ``containing`` (case-insensitive) when given: the Memory view's list."""
        sql = f"SELECT {ENTRY_COLUMNS}, conversation_id FROM companion_memory WHERE companion_id = ?"
        args: list[object] = [companion_id]
        if containing.strip():
            sql += " AND instr(lower(text), ?) > 0"
            args.append(containing.strip().lower())
        if before_seq is not None:
            sql += " AND seq < ?"
            args.append(before_seq)
        rows = await asyncio.to_thread(self._run, sql + " ORDER BY seq DESC LIMIT ?", (*args, limit))
        return [HeardLine(_entry(r), None if r[8] is None else int(str(r[8]))) for r in rows]

    async def count(self, companion_id: str) -> int:
        rows = await asyncio.to_thread(self._run, "SELECT COUNT(*) FROM companion_memory WHERE companion_id = ?",
                                       (companion_id,))
        return int(str(rows[0][0]))

    async def append_many(self, companion_id: str, conversation: int | None, entries: Sequence[MemoryEntry]) -> None:
        """Stores ``entries`` at once (an imported conversation: one transaction)."""
        rows = [(companion_id, e.seq, e.role, e.speaker_id, e.speaker_name, e.text, e.message_id, e.at, conversation,
                 e.imported) for e in entries]

        def write() -> None:
            with self._lock:
                self._conn.execute("BEGIN")
                try:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO companion_memory (companion_id, seq, role, speaker_id, speaker_name,"
                        " text, message_id, at, conversation_id, imported) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
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
