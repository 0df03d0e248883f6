"""Storage: migrations (every earlier database upgraded without losing a row), conversations, and at most the
in-flight message lost to SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import textwrap
import threading
from pathlib import Path

import pytest

from app.memory.notes import NotesStore
from app.memory.store import SqliteMemoryStore
from app.storage.database import ConversationStore
from app.storage.schema import MIGRATIONS, migrate, open_database
from companions.wire.protocol import Message, State
from tests.app.storage.old_schemas import MemoryForm, old_database
from tests.conftest import PYTHON, REPO


async def test_messages_and_states_are_stored_in_order(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "db.sqlite3")
    await store.open()
    cid = await store.create_conversation()
    sent = [Message.create(from_="user", to=["c1"], message=f"こんにちは {i}", emotion="happy") for i in range(5)]
    for m in sent:
        await store.add_message(cid, m)
    await store.add_message(cid, sent[0])  # a repeated id is ignored
    await store.add_state(cid, State.create(from_="c1", message_id=sent[0].params.id, state="speak", importance=5))
    stored = await store.messages(cid)
    assert [s.message for s in stored] == sent
    assert [s.message for s in await store.messages(cid, limit=2)] == sent[-2:]
    info = (await store.list_conversations())[0]
    assert info.message_count == 5
    assert info.title.startswith("こんにちは")
    await store.close()


async def test_conversations_list_switch_and_delete(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "db.sqlite3")
    await store.open()
    a = await store.create_conversation("a")
    b = await store.create_conversation("b")
    await store.add_message(a, Message.create(from_="user", message="in a"))
    assert await store.latest_conversation() == a  # most recently updated
    await store.delete_conversation(a)
    assert [c.id for c in await store.list_conversations()] == [b]
    assert await store.messages(a) == []
    await store.close()


def test_database_is_wal_and_migrated(tmp_path: Path) -> None:
    conn = open_database(tmp_path / "db.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert migrate(conn) == len(MIGRATIONS)  # idempotent
    conn.close()


def test_a_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "db.sqlite3")
    conn.execute(f"PRAGMA user_version={len(MIGRATIONS) + 5}")
    with pytest.raises(RuntimeError, match="newer than this Madoi knows"):
        migrate(conn)
    conn.close()


def shape(conn: sqlite3.Connection) -> dict[str, object]:
    """The schema as it behaves: each table's columns (name, type, not null, default, key) and the indexes."""
    tables = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    indexes = sorted(str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'"))
    return {"tables": {t: conn.execute(f"PRAGMA table_info({t})").fetchall() for t in tables}, "indexes": indexes,
            "version": conn.execute("PRAGMA user_version").fetchone()[0]}


@pytest.mark.parametrize("notes", [False, True])
@pytest.mark.parametrize("memory", ["none", "before conversations", "with conversations"])
@pytest.mark.parametrize("version", [1, 2, 3])
async def test_a_database_of_an_earlier_madoi_is_upgraded_without_losing_a_row(
    tmp_path: Path, version: int, memory: MemoryForm, notes: bool
) -> None:
    path = tmp_path / "madoi.sqlite3"
    old = old_database(path, version, memory, notes)  # made with the statements of the time, not today's
    old.executemany("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                    [(1, "mountains", 10.0, 11.0), (2, "curry", 20.0, 21.0)])
    old.executemany("INSERT INTO messages (conversation_id, id, sender, recipients, text, emotion, created_at)"
                    " VALUES (?, ?, ?, '[]', ?, NULL, ?)",
                    [(1, "m1", "user", "高尾山に登ろう", 10.5), (2, "m2", "akari", "カレーを作ろう", 20.5)])
    old.execute("INSERT INTO states (conversation_id, message_id, sender, state, importance, selected, closing,"
                " created_at) VALUES (1, 'm1', 'akari', 'speak', 7, 1, 'none', 10.6)")
    lines = [("m1", "heard", "user", "高尾山に登ろう", 1), ("m2", "said", "akari", "カレーを作ろう", 2),
             ("gone", "heard", "user", "暗証番号は4721", 3)]  # the third line's conversation was deleted
    if memory == "before conversations":
        old.executemany("INSERT INTO companion_memory VALUES ('akari', ?, ?, ?, 'X', ?, ?, 1.0)",
                        [(seq, role, who, text, mid) for seq, (mid, role, who, text, _) in enumerate(lines, 1)])
    elif memory == "with conversations":
        old.executemany("INSERT INTO companion_memory VALUES ('akari', ?, ?, ?, 'X', ?, ?, 1.0, ?)",
                        [(seq, role, who, text, mid, c) for seq, (mid, role, who, text, c) in enumerate(lines, 1)])
    if notes:
        old.execute("INSERT INTO memory_notes (companion_id, conversation_id, text, kind, at, sources) VALUES"
                    " ('akari', 1, 'The user likes mountains', 'preference', 12.0, '[\"m1\"]')")
        old.execute("INSERT INTO memory_notes_done VALUES ('akari', 1, 1)")
    old.close()

    store = ConversationStore(path)  # the runtime opens the conversations first
    await store.open()
    fresh = open_database(tmp_path / "fresh.sqlite3")
    assert shape(store.conn) == shape(fresh), "every earlier database ends as a new one starts"
    fresh.close()
    assert [(c.id, c.title, c.message_count) for c in await store.list_conversations()] == [
        (2, "curry", 1), (1, "mountains", 1)]
    assert [(m.message.params.id, m.message.params.message, m.created_at) for m in await store.messages(1)] == [
        ("m1", "高尾山に登ろう", 10.5)]
    assert store.conn.execute("SELECT message_id, importance FROM states").fetchall() == [("m1", 7)]

    memories = SqliteMemoryStore(path)
    remembered = {c: [(e.message_id, e.role, e.text) for e in await memories.load("akari", c)] for c in (1, 2, 3)}
    if memory == "none":
        assert remembered == {1: [], 2: [], 3: []}
    else:  # each line under its conversation (found from its message when the table had none); the deleted one gone
        assert remembered == {1: [("m1", "heard", "高尾山に登ろう")], 2: [("m2", "said", "カレーを作ろう")], 3: []}
        assert await memories.last_seq("akari") == 2
    memories.close()

    kept = NotesStore(path)
    assert [(n.text, n.sources) for _, n in await kept.of_companion("akari")] == (
        [("The user likes mountains", ("m1",))] if notes else [])
    assert await kept.done_seq("akari", 1) == (1 if notes else 0)
    kept.close()
    await store.close()


def test_connections_opening_a_new_database_at_once_migrate_it_once(tmp_path: Path) -> None:
    path, opened, failed = tmp_path / "madoi.sqlite3", [], []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait()
        try:
            opened.append(open_database(path))
        except Exception as exc:  # the test reports it
            failed.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    assert [conn.execute("PRAGMA user_version").fetchone()[0] for conn in opened] == [len(MIGRATIONS)] * 4
    for conn in opened:
        conn.close()


def test_opening_waits_for_a_write_under_way_before_it_switches_to_wal(tmp_path: Path) -> None:
    """A write under way on a database still in rollback mode (another connection opening it, or an older Madoi)
    made the switch to WAL fail at once with "database is locked", with no wait (SQLite's deadlock avoidance):
    seen as a failed start under load. The switch waits for the write instead."""
    path = tmp_path / "madoi.sqlite3"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE elsewhere (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO elsewhere VALUES (1)")
    finished = threading.Timer(0.3, writer.execute, ("COMMIT",))
    finished.start()
    try:
        conn = open_database(path)
    finally:
        finished.join()
        writer.close()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from app.runtime.runtime import Runtime
    from app.settings.model import load_settings

    async def main():
        runtime = Runtime(load_settings())
        await runtime.start()
        n = 0
        while True:
            m = runtime.parts.conversations.send(f"message {n}")
            await runtime.bus.drain()   # the storage subscriber has committed it
            print(m.params.id, flush=True)
            n += 1

    asyncio.run(main())
    """
)


def test_sigkill_mid_conversation_loses_at_most_the_message_in_flight(madoi_home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([PYTHON, "-c", WRITER], stdout=subprocess.PIPE, env=env, cwd=REPO, text=True)
    assert proc.stdout is not None
    confirmed = []
    for line in proc.stdout:
        confirmed.append(line.strip())
        if len(confirmed) >= 200:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    confirmed += [line.strip() for line in proc.stdout.read().splitlines() if line.strip()]
    conn = sqlite3.connect(madoi_home / "madoi.sqlite3")
    stored = [row[0] for row in conn.execute("SELECT id FROM messages ORDER BY seq")]
    conn.close()
    assert len(confirmed) >= 200
    assert stored[: len(confirmed)] == confirmed  # every confirmed message survived, in order
    assert len(stored) - len(confirmed) <= 1  # at most the one in flight was written but not yet confirmed
