"""``madoi.sqlite3`` as earlier Madoi versions left it, made with their own statements (frozen copies: the upgrade
tests open these with today's code, app/storage/schema.py).

Before one module owned the schema, three made it: the conversation store's versioned migrations (``PRAGMA
user_version`` 1 to 3), and, outside the version, the memory store's ``companion_memory`` (first without
``conversation_id``, later with it and its indexes) and the notes store's ``memory_notes`` tables.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final, Literal

# The conversation store's migrations as shipped: version i+1 is the first i+1 of them.
CONVERSATION_MIGRATIONS: Final = (
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
    """
    ALTER TABLE messages ADD COLUMN filler TEXT;
    ALTER TABLE messages ADD COLUMN edited_at REAL;
    """,
    """
    ALTER TABLE messages ADD COLUMN look TEXT;
    """,
)

# The memory store's table before memories followed conversations (one rolling list per companion).
MEMORY_BEFORE_CONVERSATIONS: Final = (
    "CREATE TABLE IF NOT EXISTS companion_memory (companion_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " role TEXT NOT NULL, speaker_id TEXT NOT NULL, speaker_name TEXT NOT NULL, text TEXT NOT NULL,"
    " message_id TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (companion_id, seq))"
)

# The memory store's table and indexes as last made (SqliteMemoryStore's _create_or_upgrade in the core).
MEMORY_WITH_CONVERSATIONS: Final = (
    "CREATE TABLE IF NOT EXISTS companion_memory (companion_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " role TEXT NOT NULL, speaker_id TEXT NOT NULL, speaker_name TEXT NOT NULL, text TEXT NOT NULL,"
    " message_id TEXT NOT NULL, at REAL NOT NULL, conversation_id INTEGER, PRIMARY KEY (companion_id, seq))",
    "CREATE INDEX IF NOT EXISTS companion_memory_by_conversation"
    " ON companion_memory (companion_id, conversation_id, seq)",
    "CREATE INDEX IF NOT EXISTS companion_memory_of_conversation ON companion_memory (conversation_id)",
    "CREATE INDEX IF NOT EXISTS companion_memory_by_message ON companion_memory (companion_id, message_id)",
)

# The notes store's tables (app/memory/notes.py's SCHEMA, run at every opening).
NOTES: Final = """
CREATE TABLE IF NOT EXISTS memory_notes (id INTEGER PRIMARY KEY, companion_id TEXT NOT NULL,
    conversation_id INTEGER, text TEXT NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL, sources TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS memory_notes_by_companion ON memory_notes (companion_id);
CREATE TABLE IF NOT EXISTS memory_notes_done (companion_id TEXT NOT NULL, conversation_id INTEGER NOT NULL,
    seq INTEGER NOT NULL, PRIMARY KEY (companion_id, conversation_id));
"""

MemoryForm = Literal["none", "before conversations", "with conversations"]


def old_database(path: Path, version: int, memory: MemoryForm = "none", notes: bool = False) -> sqlite3.Connection:
    """A database as an earlier Madoi left it: the conversation schema at ``version``, the memory table in its
    ``memory`` form, the notes tables when ``notes``. The caller fills it and closes the connection."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for index in range(version):
        conn.executescript(CONVERSATION_MIGRATIONS[index])
        conn.execute(f"PRAGMA user_version={index + 1}")
    if memory == "before conversations":
        conn.execute(MEMORY_BEFORE_CONVERSATIONS)
    elif memory == "with conversations":
        for statement in MEMORY_WITH_CONVERSATIONS:
            conn.execute(statement)
    if notes:
        conn.executescript(NOTES)
    return conn
