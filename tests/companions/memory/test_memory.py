"""Per-companion memory: heard-only context, impersonation stripping, token budget (its SQLite store is the app's:
tests/app/memory/test_memory_store.py)."""

from __future__ import annotations

from companions.memory.context import CompanionMemory, estimate_tokens, strip_impersonation
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


def test_impersonation_in_the_labels_small_models_write_is_stripped() -> None:
    own, others = ["Akari", "あかり", "akari"], ["ひな", "Hina", "hina", "souta"]
    assert strip_impersonation("あかり (id: akari): こんにちは！", own, others) == "こんにちは！"
    assert strip_impersonation("Akari (akari): Hi", own, others) == "Hi"
    assert strip_impersonation("Akari: Akari (akari): Hi", own, others) == "Hi"
    assert strip_impersonation("Hello!\nひな (id: hina): そうだね\nまたね", own, others) == "Hello!"
    assert strip_impersonation("[souta] おう", own, others) == ""
    assert strip_impersonation("Hina says: let's go", own, others) == ""
    assert strip_impersonation("Hina, what do you think?", own, others) == "Hina, what do you think?"


async def test_without_a_store_a_followed_conversation_starts_empty() -> None:
    memory = CompanionMemory("akari")
    await memory.remember(msg("user", "before any conversation"), "User")
    await memory.load()
    assert [e.text for e in memory.entries] == ["before any conversation"]
    await memory.follow(1)
    assert len(memory.entries) == 0
