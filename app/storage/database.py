"""The conversation database: one SQLite file in WAL mode, migrated on open, written as things happen.

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
from typing import Final, TypeVar

from app.storage.private_files import private_file
from companions.companion.filler import FILLER_REASONS, filler_metadata, filler_reason
from companions.devices.shown_look import look_metadata, shown_look, shown_parts
from companions.wire.protocol import Message, MessageMetadata, State

T = TypeVar("T")

# Append-only: each entry moves the schema from version i to i+1 (PRAGMA user_version). Never edit a shipped one.
MIGRATIONS: Final[tuple[str, ...]] = (
    """
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        title TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        sender TEXT NOT NULL,
        recipients TEXT NOT NULL,
        text TEXT NOT NULL,
        emotion TEXT,
        created_at REAL NOT NULL,
        UNIQUE (conversation_id, id)
    );
    CREATE INDEX messages_by_conversation ON messages(conversation_id, seq);
    CREATE TABLE states (
        seq INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        message_id TEXT NOT NULL,
        sender TEXT NOT NULL,
        state TEXT NOT NULL,
        importance INTEGER NOT NULL,
        selected INTEGER NOT NULL,
        closing TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX states_by_message ON states(conversation_id, message_id);
    """,
    # What the chat marks on a message after a restart too: the reason a stock filler stood in for a companion's
    # line (companions/companion/filler.py), and when the user edited it.
    """
    ALTER TABLE messages ADD COLUMN filler TEXT;
    ALTER TABLE messages ADD COLUMN edited_at REAL;
    """,
    # What the camera saw at the end of a user's message ("Show them"): the chat folds it away after a restart too
    # (companions/devices/shown_look.py).
    """
    ALTER TABLE messages ADD COLUMN look TEXT;
    """,
)


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


def open_database(path: Path) -> sqlite3.Connection:
    """Opens (creating if needed) and migrates the database at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    private_file(path)  # 0600 before SQLite opens it: SQLite gives its -wal and -shm the database file's mode
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)
    conn.execute("PRAGMA journal_mode=WAL")
    for companion in ("-wal", "-shm"):  # made by an older Madoi before the database was private
        if (side := path.with_name(path.name + companion)).exists():
            private_file(side)
    # NORMAL in WAL mode survives a process crash (SIGKILL); only a power cut can lose the last commits.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection, migrations: Sequence[str] = MIGRATIONS) -> int:
    """Applies the pending migrations, each in its own transaction; returns the schema version."""
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(migrations):
        raise RuntimeError(
            f"the database schema (version {version}) is newer than this Madoi knows ({len(migrations)}); "
            "update Madoi or use another MADOI_HOME"
        )
    for index in range(version, len(migrations)):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(migrations[index]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={index + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(migrations)


def _statements(script: str) -> list[str]:
    parts, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                parts.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        parts.append(buffer.strip())
    return parts


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

    async def rename_conversation(self, conversation_id: int, title: str) -> None:
        await self._run(
            lambda: self.conn.execute("UPDATE conversations SET title=? WHERE id=?", (title, conversation_id))
        )

    async def delete_conversation(self, conversation_id: int) -> None:
        await self._run(lambda: self.conn.execute("DELETE FROM conversations WHERE id=?", (conversation_id,)))

    # -- messages and states ---------------------------------------------------------------------------------
    async def add_message(self, conversation_id: int, message: Message) -> None:
        """Stores ``message`` (committed before returning); a repeated id is ignored."""
        await self._run(lambda: self._insert_message(conversation_id, message))

    def _insert_message(self, conversation_id: int, message: Message) -> None:
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
            title_default = shown_parts(message)[0][:40] if p.from_ else ""  # the user's words, not the camera's
            self.conn.execute(
                "UPDATE conversations SET updated_at=?, title=CASE WHEN title='' THEN ? ELSE title END WHERE id=?",
                (now, title_default, conversation_id),
            )

    async def import_conversation(self, title: str, messages: Sequence[tuple[Message, float]]) -> int:
        """Stores a conversation said elsewhere (``madoi conversations import``): its messages at their times, in
        one transaction. Returns its id."""

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
                       created_at) VALUES (?, ?, ?, ?, ?, ?, ?)""",
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
