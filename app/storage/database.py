"""The conversations in the database: one SQLite file in WAL mode (app/storage/schema.py), written as things happen.

All SQL runs on one dedicated thread (SQLite connections are not shared across threads and bulk work must not
block the event loop); the async methods hand work to it. Each message is committed on its own, so a process
killed with SIGKILL loses at most the message being written.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from app.storage.schema import open_database
from companions.companion.filler import FILLER_REASONS, filler_metadata, filler_reason
from companions.devices.shown_look import look_metadata, shown_look, shown_parts
from companions.wire.protocol import Message, MessageMetadata, State

T = TypeVar("T")


@dataclass(frozen=True)
class ConversationInfo:
    id: int
    title: str
    created_at: float
    updated_at: float
    message_count: int


@dataclass(frozen=True)
class StoredMessage:
    seq: int
    conversation_id: int
    message: Message
    created_at: float
    edited_at: float | None = None  # when the user edited it, if they did


class ConversationStore:
    """Conversations, messages and votes, persisted as they happen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        self._conn: sqlite3.Connection | None = None

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def open(self) -> None:
        self._conn = await self._run(lambda: open_database(self.path))

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._run(conn.close)
        self._executor.shutdown(wait=True)

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("the conversation store is not open")
        return self._conn

    # -- conversations ---------------------------------------------------------------------------------------
    async def create_conversation(self, title: str = "") -> int:
        def create() -> int:
            now = time.time()
            cur = self.conn.execute(
                "INSERT INTO conversations(title, created_at, updated_at) VALUES (?, ?, ?)", (title, now, now)
            )
            assert cur.lastrowid is not None
            return cur.lastrowid

        return await self._run(create)

    async def latest_conversation(self) -> int | None:
        def latest() -> int | None:
            row = self.conn.execute("SELECT id FROM conversations ORDER BY updated_at DESC, id DESC LIMIT 1")
            found = row.fetchone()
            return None if found is None else int(found[0])

        return await self._run(latest)

    async def has_conversation(self, conversation_id: int) -> bool:
        def found() -> bool:
            row = self.conn.execute("SELECT 1 FROM conversations WHERE id=?", (conversation_id,)).fetchone()
            return row is not None

        return await self._run(found)

    async def list_conversations(self) -> list[ConversationInfo]:
        def listing() -> list[ConversationInfo]:
            rows = self.conn.execute(
                """SELECT c.id, c.title, c.created_at, c.updated_at, COUNT(m.seq)
                   FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id
                   GROUP BY c.id ORDER BY c.updated_at DESC, c.id DESC"""
            ).fetchall()
            return [ConversationInfo(int(r[0]), r[1], r[2], r[3], int(r[4])) for r in rows]

        return await self._run(listing)

    async def delete_conversation(self, conversation_id: int) -> None:
        await self._run(lambda: self.conn.execute("DELETE FROM conversations WHERE id=?", (conversation_id,)))

    # -- messages and states ---------------------------------------------------------------------------------
    async def add_message(self, conversation_id: int, message: Message, *, titles: bool = True) -> None:
        """Stores ``message`` (committed before returning); a repeated id is ignored. ``titles``: its words may be
        the conversation's title, if it has none yet."""
        await self._run(lambda: self._insert_message(conversation_id, message, titles))

    def _insert_message(self, conversation_id: int, message: Message, titles: bool) -> None:
        p = message.params
        emotion = p.metadata.emotion if p.metadata is not None else None
        now = time.time()
        with self.conn:  # one transaction: the message and the conversation's timestamp
            self.conn.execute("BEGIN")
            self.conn.execute(
                """INSERT OR IGNORE INTO messages(conversation_id, id, sender, recipients, text, emotion, created_at,
                   filler, look) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (conversation_id, p.id, p.from_, json.dumps(p.to), p.message, emotion, now, filler_reason(message),
                 shown_look(message)),
            )
            title_default = shown_parts(message)[0][:40] if titles and p.from_ else ""  # the words, not the camera's
            self.conn.execute(
                "UPDATE conversations SET updated_at=?, title=CASE WHEN title='' THEN ? ELSE title END WHERE id=?",
                (now, title_default, conversation_id),
            )

    async def import_conversation(self, title: str, messages: Sequence[tuple[Message, float]]) -> int:
        """Stores a conversation said elsewhere (``madoi conversations import``): its messages at their times,
        marked imported, in one transaction. Returns its id."""

        def write() -> int:
            with self.conn:
                self.conn.execute("BEGIN")
                last = max((at for _, at in messages), default=time.time())
                first = min((at for _, at in messages), default=last)
                cur = self.conn.execute("INSERT INTO conversations(title, created_at, updated_at) VALUES (?, ?, ?)",
                                        (title, first, last))
                assert cur.lastrowid is not None
                self.conn.executemany(
                    """INSERT OR IGNORE INTO messages(conversation_id, id, sender, recipients, text, emotion,
                       created_at, imported) VALUES (?, ?, ?, ?, ?, ?, ?, 1)""",
                    [(cur.lastrowid, m.params.id, m.params.from_, json.dumps(m.params.to), m.params.message,
                      m.params.metadata.emotion if m.params.metadata is not None else None, at)
                     for m, at in messages])
                return cur.lastrowid

        return await self._run(write)

    async def conversation_of(self, message_id: str) -> int | None:
        """The stored conversation holding a message with this id (the first one), or None."""

        def find() -> int | None:
            row = self.conn.execute("SELECT MIN(conversation_id) FROM messages WHERE id=?", (message_id,)).fetchone()
            return None if row is None or row[0] is None else int(row[0])

        return await self._run(find)

    async def revise_message(self, conversation_id: int, message_id: str, text: str | None) -> None:
        """Edits (``text``) or deletes (None) a stored message."""
        args: tuple[object, ...] = (conversation_id, message_id)
        sql = "DELETE FROM messages WHERE conversation_id=? AND id=?"
        if text is not None:
            sql, args = "UPDATE messages SET text=?, edited_at=? WHERE conversation_id=? AND id=?", \
                (text, time.time(), *args)

        def run() -> None:
            with self.conn:
                self.conn.execute(sql, args)

        await self._run(run)

    async def add_state(self, conversation_id: int, state: State) -> None:
        p = state.params
        await self._run(
            lambda: self.conn.execute(
                """INSERT INTO states(conversation_id, message_id, sender, state, importance, selected, closing,
                   created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (conversation_id, p.messageId, p.from_, p.state, p.importance, int(p.selected), p.closing,
                 time.time()),
            )
        )

    async def messages(self, conversation_id: int, limit: int | None = None) -> list[StoredMessage]:
        """The conversation's messages, oldest first (the newest ``limit`` when given)."""

        def fetch() -> list[StoredMessage]:
            sql = """SELECT seq, id, sender, recipients, text, emotion, created_at, filler, edited_at, look
                     FROM messages WHERE conversation_id=? ORDER BY seq DESC"""
            args: tuple[int, ...] = (conversation_id,)
            if limit is not None:
                sql += " LIMIT ?"
                args = (conversation_id, limit)
            rows = self.conn.execute(sql, args).fetchall()
            out = []
            for seq, mid, sender, recipients, text, emotion, created, filler, edited, look in reversed(rows):
                marks = filler_metadata(filler) if filler in FILLER_REASONS else {}
                if look:
                    marks |= look_metadata(look)
                meta = MessageMetadata.model_validate({"emotion": emotion, **marks}) if emotion or marks else None
                msg = Message.model_validate(
                    {"params": {"id": mid, "from": sender, "to": json.loads(recipients), "message": text,
                                "metadata": meta}}
                )
                out.append(StoredMessage(int(seq), conversation_id, msg, created, edited))
            return out

        return await self._run(fetch)
