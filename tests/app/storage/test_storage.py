"""Storage: migrations, conversations, and at most the in-flight message lost to SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import textwrap
from pathlib import Path

import pytest

from app.storage.database import MIGRATIONS, ConversationStore, migrate, open_database
from companions.wire.protocol import Message, State
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
