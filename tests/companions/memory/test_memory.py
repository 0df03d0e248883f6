"""Per-companion memory: heard-only context, impersonation stripping, token budget, SQLite persistence."""

from __future__ import annotations

from pathlib import Path

from companions.memory.context import CompanionMemory, SqliteMemoryStore, estimate_tokens, strip_impersonation
from companions.wire.protocol import Message


def test_impersonation_is_stripped() -> None:
    own, others = ["Akari", "あかり"], ["Bob", "User", "ひな"]
    assert strip_impersonation("Akari: Hi everyone!", own, others) == "Hi everyone!"
    assert strip_impersonation("あかり：こんにちは！", own, others) == "こんにちは！"
    assert strip_impersonation("**Akari**: Hello", own, others) == "Hello"
    text = "Sounds fun!\nBob: I agree, let's go.\nUser: yes!\nAkari: Then it's settled."
    assert strip_impersonation(text, own, others) == "Sounds fun!\nThen it's settled."
    assert strip_impersonation("ひな: そうですね", own, others) == ""
    assert strip_impersonation("Bobby is nice: really", own, others) == "Bobby is nice: really"
    assert strip_impersonation("Time: 3 pm", own, others) == "Time: 3 pm"


def test_token_estimate_is_cjk_aware() -> None:
    assert estimate_tokens("こんにちは") > estimate_tokens("hello")
    assert 20 <= estimate_tokens("a" * 100) <= 30


def msg(sender: str, text: str, to: list[str] | None = None) -> Message:
    return Message.create(from_=sender, message=text, to=to)


async def test_memory_is_bounded_by_its_token_budget() -> None:
    memory = CompanionMemory("akari", budget_tokens=60)
    for i in range(30):
        await memory.remember(msg("user", f"message number {i} " + "x" * 40), "User")
    assert memory.tokens <= 60
    assert memory.entries[-1].text.startswith("message number 29")
    assert not any(e.text.startswith("message number 0 ") for e in memory.entries)


async def test_own_words_are_assistant_and_others_are_named_user_lines() -> None:
    memory = CompanionMemory("akari")
    await memory.remember(msg("user", "Hello Akari"), "Taro")
    await memory.remember(msg("akari", "Hi Taro!"), "Akari")
    messages = memory.as_messages()
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[0].text == "Taro (id: user): Hello Akari"
    assert messages[1].text == "Hi Taro!"


async def test_memory_persists_in_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
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


def test_impersonation_in_the_labels_small_models_write_is_stripped() -> None:
    own, others = ["Akari", "あかり", "akari"], ["ひな", "Hina", "hina", "souta"]
    assert strip_impersonation("あかり (id: akari): こんにちは！", own, others) == "こんにちは！"
    assert strip_impersonation("Akari (akari): Hi", own, others) == "Hi"
    assert strip_impersonation("Akari: Akari (akari): Hi", own, others) == "Hi"
    assert strip_impersonation("Hello!\nひな (id: hina): そうだね\nまたね", own, others) == "Hello!"
    assert strip_impersonation("[souta] おう", own, others) == ""
    assert strip_impersonation("Hina says: let's go", own, others) == ""
    assert strip_impersonation("Hina, what do you think?", own, others) == "Hina, what do you think?"


async def test_an_edited_or_deleted_message_is_remembered_as_it_stands_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
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
    path = tmp_path / "memory.sqlite3"
    store = SqliteMemoryStore(path)
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
    store = SqliteMemoryStore(tmp_path / "memory.sqlite3")
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


async def test_without_a_store_a_followed_conversation_starts_empty() -> None:
    memory = CompanionMemory("akari")
    await memory.remember(msg("user", "before any conversation"), "User")
    await memory.load()
    assert [e.text for e in memory.entries] == ["before any conversation"]
    await memory.follow(1)
    assert len(memory.entries) == 0
