"""The companions' memory store on Madoi's database (app/memory/store.py): what a companion heard outlives a
restart, per conversation, as edited, and forgotten with its conversation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.memory.store import SqliteMemoryStore
from companions.memory.context import CompanionMemory, estimate_tokens
from companions.wire.protocol import Message


def msg(sender: str, text: str, to: list[str] | None = None) -> Message:
    return Message.create(from_=sender, message=text, to=to)


async def test_memory_persists_in_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "madoi.sqlite3"
    store = SqliteMemoryStore(path)
    memory = CompanionMemory("akari", budget_tokens=40, store=store)
    other = CompanionMemory("hina", store=store)
    for i in range(10):
        await memory.remember(msg("user", f"line {i} " + "y" * 30), "User")
    await other.remember(msg("user", "only for hina"), "User")
    kept = [e.text for e in memory.entries]
    store.close()

    reopened = SqliteMemoryStore(path)
    restored = CompanionMemory("akari", budget_tokens=40, store=reopened)
    await restored.load()
    assert [e.text for e in restored.entries] == kept
    assert all("only for hina" not in e.text for e in restored.entries)
    await restored.remember(msg("user", "after restart"), "User")
    assert restored.entries[-1].seq > max(e.seq for e in memory.entries)
    # The lines trimmed out of the context stay on disk: long-term recall searches them (companions/memory/recall.py).
    assert await reopened.count("akari") == 11
    assert len(restored.entries) < 10
    reopened.close()


async def test_an_edited_or_deleted_message_is_remembered_as_it_stands_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "madoi.sqlite3"
    store = SqliteMemoryStore(path)
    memory = CompanionMemory("akari", store=store)
    first, second = msg("user", "I saw three meteors"), msg("hina", "I saw none")
    await memory.remember(first, "User")
    await memory.remember(second, "Hina")
    assert await memory.revise(first.params.id, "I saw five meteors")
    assert await memory.revise(second.params.id, None)
    assert not await memory.revise("never-heard", None)
    assert [e.text for e in memory.entries] == ["I saw five meteors"]
    assert memory.tokens == estimate_tokens("I saw five meteors")
    store.close()
    restored = CompanionMemory("akari", store=SqliteMemoryStore(path))
    await restored.load()
    assert [e.text for e in restored.entries] == ["I saw five meteors"]


async def test_memory_holds_the_conversation_it_follows_and_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "madoi.sqlite3"
    store = SqliteMemoryStore(path)
    with sqlite3.connect(path) as conn:  # the user's conversations: a memory of one no longer stored goes at opening
        conn.executemany("INSERT INTO conversations (id, created_at, updated_at) VALUES (?, 0, 0)", [(1,), (2,), (3,)])
    memory = CompanionMemory("akari", budget_tokens=60, store=store)
    await memory.follow(1)
    await memory.remember(msg("user", "about the mountain"), "User")
    await memory.remember(msg("akari", "I love mountains"), "Akari")
    await memory.follow(2)
    assert len(memory.entries) == 0
    for i in range(20):  # trimmed within the second conversation only
        await memory.remember(msg("user", f"about the sea {i} " + "z" * 40), "User")
    assert memory.tokens <= 60
    await memory.follow(1)
    assert [e.text for e in memory.entries] == ["about the mountain", "I love mountains"]
    store.close()

    restarted = CompanionMemory("akari", budget_tokens=60, store=SqliteMemoryStore(path))
    await restarted.follow(3)
    await restarted.remember(msg("user", "about the forest"), "User")  # numbered after every conversation's
    await restarted.follow(1)
    assert [e.text for e in restarted.entries] == ["about the mountain", "I love mountains"]
    await restarted.follow(2)
    assert restarted.entries[-1].text.startswith("about the sea 19 ")
    await restarted.follow(3)
    assert [e.text for e in restarted.entries] == ["about the forest"]


async def test_a_forgotten_conversation_is_gone_for_every_companion(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "madoi.sqlite3")
    akari, hina = CompanionMemory("akari", store=store), CompanionMemory("hina", store=store)
    for memory in (akari, hina):
        await memory.follow(1)
        await memory.remember(msg("user", "the code is 4721"), "User")
    await hina.follow(2)
    await hina.remember(msg("user", "a nice day"), "User")
    await akari.forget_conversation(1)
    assert len(akari.entries) == 0  # the one it follows
    await hina.follow(1)
    assert len(hina.entries) == 0  # the store forgot every companion's entries of it
    await hina.follow(2)
    assert [e.text for e in hina.entries] == ["a nice day"]
    store.close()
