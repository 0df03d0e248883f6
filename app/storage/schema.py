"""The schema of ``madoi.sqlite3``: every table, and the one ordered list of migrations that makes it.

The tables, and who writes them:

* ``conversations``, ``messages``, ``states``: the user's conversations, their messages and the companions' votes
  (:class:`app.storage.database.ConversationStore`).
* ``companion_memory``: what each companion heard or said, under the conversation it was heard in
  (:class:`app.memory.store.SqliteMemoryStore`, the core's ``MemoryStore`` port).
* ``memory_notes``, ``memory_notes_done``: the notes companions write about the user, and how far each one has
  consolidated each conversation (:class:`app.memory.notes.NotesStore`).

The search index keeps its own file and schema (companions/search/). Whoever opens the database
(:func:`open_database`) migrates it first, so every connection sees the whole schema.

Each migration moves the schema from version i to i+1 (``PRAGMA user_version``), in one transaction. Append-only:
never edit a shipped one. Earlier Madoi versions created ``companion_memory`` and the notes tables on their own
(``CREATE TABLE IF NOT EXISTS``, outside the version), so the migrations that bring them into the schema take them
as they find them: absent, as first made, or as last made.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from companions.common.private_files import private_sqlite

# SQL statements, or a step that needs to look at the database first (tables an earlier Madoi made on its own).
Migration = str | Callable[[sqlite3.Connection], None]

LOCK_TIMEOUT_S: Final = 10.0  # how long a connection waits for another's write before it gives up

COMPANION_MEMORY: Final = """
CREATE TABLE IF NOT EXISTS companion_memory (companion_id TEXT NOT NULL, seq INTEGER NOT NULL,
    role TEXT NOT NULL, speaker_id TEXT NOT NULL, speaker_name TEXT NOT NULL, text TEXT NOT NULL,
    message_id TEXT NOT NULL, at REAL NOT NULL, conversation_id INTEGER, PRIMARY KEY (companion_id, seq));
CREATE INDEX IF NOT EXISTS companion_memory_by_conversation ON companion_memory (companion_id, conversation_id, seq);
CREATE INDEX IF NOT EXISTS companion_memory_of_conversation ON companion_memory (conversation_id);
CREATE INDEX IF NOT EXISTS companion_memory_by_message ON companion_memory (companion_id, message_id);
"""


def _companion_memory(conn: sqlite3.Connection) -> None:
    """The memory table, or the one an earlier Madoi made. One from before memories followed conversations (no
    ``conversation_id``) is upgraded: each entry goes under the conversation its message is stored in, and the
    entries whose message is stored nowhere (their conversation was deleted) are dropped."""
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(companion_memory)")}
    if columns and "conversation_id" not in columns:
        conn.execute("ALTER TABLE companion_memory ADD COLUMN conversation_id INTEGER")
        conn.execute("UPDATE companion_memory SET conversation_id = (SELECT MIN(m.conversation_id) FROM messages m"
                     " WHERE m.id = companion_memory.message_id)")
        conn.execute("DELETE FROM companion_memory WHERE conversation_id IS NULL")
    for statement in _statements(COMPANION_MEMORY):
        conn.execute(statement)


MIGRATIONS: Final[tuple[Migration, ...]] = (
    # 1: conversations, their messages and the companions' votes.
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
    # 2: what the chat marks on a message after a restart too: the reason a stock filler stood in for a companion's
    # line (companions/companion/filler.py), and when the user edited it.
    """
    ALTER TABLE messages ADD COLUMN filler TEXT;
    ALTER TABLE messages ADD COLUMN edited_at REAL;
    """,
    # 3: what the camera saw at the end of a user's message ("Show them"): the chat folds it away after a restart
    # too (companions/devices/shown_look.py).
    """
    ALTER TABLE messages ADD COLUMN look TEXT;
    """,
    # 4: each companion's memory: every line it heard or said, under its conversation (companions/memory/context.py);
    # the record of who heard what that recall searches, also the lines trimmed out of a context.
    _companion_memory,
    # 5: notes about the user (app/memory/notes.py): one row per note, citing the message ids it was written from,
    # and per companion and conversation the last memory entry consolidated. IF NOT EXISTS: an earlier Madoi made
    # these tables on their own, as they are here.
    """
    CREATE TABLE IF NOT EXISTS memory_notes (id INTEGER PRIMARY KEY, companion_id TEXT NOT NULL,
        conversation_id INTEGER, text TEXT NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL, sources TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS memory_notes_by_companion ON memory_notes (companion_id);
    CREATE TABLE IF NOT EXISTS memory_notes_done (companion_id TEXT NOT NULL, conversation_id INTEGER NOT NULL,
        seq INTEGER NOT NULL, PRIMARY KEY (companion_id, conversation_id));
    """,
    # 6: which messages and memories came from an imported conversation (app/conversations/transfer.py): never
    # said in this app by its user or its companions, so untrusted text when recalled (companions/memory/recall.py).
    """
    ALTER TABLE messages ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE companion_memory ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
    """,
)


def open_database(path: Path) -> sqlite3.Connection:
    """Opens (creating if needed) and migrates the database at ``path`` (every connection to it is opened here)."""
    private_sqlite(path)  # 0600 before SQLite opens it: SQLite gives its -wal and -shm the database file's mode
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=LOCK_TIMEOUT_S)
    _use_wal(conn)
    # NORMAL in WAL mode survives a process crash (SIGKILL); only a power cut can lose the last commits.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    migrate(conn)
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Puts the database in WAL mode. On a new file several connections opening at once race to switch it: SQLite
    answers the loser "database is locked" at once, without waiting (a connection that holds a read lock never
    waits for a writer: deadlock avoidance), so the switch is tried again until it goes through."""
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # a file system without WAL keeps its mode: that is no error
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err):
                raise
        if time.monotonic() > deadline:
            raise sqlite3.OperationalError(f"the database stayed locked for {LOCK_TIMEOUT_S:g} s")
        time.sleep(0.01)


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Applies the pending migrations, each in its own transaction; returns the schema version.

    Several connections may open the database at once (the conversations, the memory and the notes each have
    one): the version is read again inside each transaction, so a migration another connection applied meanwhile
    is not applied twice."""
    version = _version(conn)
    if version > len(migrations):
        raise RuntimeError(
            f"the database schema (version {version}) is newer than this Madoi knows ({len(migrations)}); "
            "update Madoi or use another MADOI_HOME"
        )
    while version < len(migrations):
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = _version(conn)
            if version < len(migrations):
                step = migrations[version]
                if isinstance(step, str):
                    for statement in _statements(step):
                        conn.execute(statement)
                else:
                    step(conn)
                version += 1
                conn.execute(f"PRAGMA user_version={version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(migrations)


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _statements(script: str) -> list[str]:
    """The SQL statements of ``script``, one by one (``executescript`` would commit the transaction)."""
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
