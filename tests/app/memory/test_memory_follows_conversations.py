"""Companions' memory follows the user's conversations: the real runtime, its real SQLite database
and the sample companions on scripted chat models. A companion's prompt carries the conversation on the screen,
nothing of the others, and nothing of a deleted one, also after a restart."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Final

from app.memory.store import SqliteMemoryStore
from app.runtime.runtime import Runtime
from app.storage.database import ConversationStore
from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import ScriptedCast, reply_json, say
from companions.memory.context import CompanionMemory
from companions.wire.protocol import Message
from tests.app.storage.old_schemas import old_database
from tests.ui.scripted_runtime import COMPANIONS, scripted_cast, scripted_runtime


def listening_cast() -> ScriptedCast:
    """The sample companions' scripted models; every companion listens, unless a test queues more."""
    cast = scripted_cast()
    for model in cast.values():
        model.lane("vote").always(reply_json({"state": "listen", "importance": 0, "reason": ""}))
    return cast


@asynccontextmanager
async def running(cast: ScriptedCast) -> AsyncIterator[tuple[Runtime, ConversationReadModel]]:
    """The runtime on ``cast``'s models, and the conversation as a person watching it sees it."""
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        try:
            yield runtime, talk
        finally:
            talk.close()


# Akari's answers when a test gives none: each line once (her own line said again would be a repeat, asked again)
_ANSWERS: Final = itertools.cycle(("そうなんだ！", "へえ、いいね！", "なるほどね。", "うんうん、それで？"))


async def chat(runtime: Runtime, talk: ConversationReadModel, text: str, *, akari_says: str | None = None) -> None:
    """The user says ``text`` to everyone; Akari answers ``akari_says`` (the user's message is always answered;
    a line of hers not said yet when not given); the conversation ends."""
    akari_says = akari_says or next(_ANSWERS)
    runtime.parts.cast.companions["akari"].model.lane("vote").add(  # type: ignore[attr-defined]
        reply_json({"state": "speak", "importance": 8, "reason": "I know"}))
    runtime.parts.cast.companions["akari"].model.lane("chat").add(say(akari_says))  # type: ignore[attr-defined]
    message = runtime.parts.conversations.send(text)
    await talk.wait_for(lambda v: v.status == "ended" and any(t.turn_id == message.params.id for t in talk.turns()),
                        timeout=20)
    await runtime.bus.drain()


def prompts(runtime: Runtime) -> dict[str, str]:
    """Each companion's prompt (its system message and memory), as the next request would send it."""
    return {c.id: "\n".join(m.text for m in c.context()) for c in runtime.parts.cast}


def holding(runtime: Runtime, text: str) -> list[str]:
    """The companions whose prompt holds ``text``."""
    return [name for name, prompt in prompts(runtime).items() if text in prompt]


ALL = list(COMPANIONS)


async def test_switching_conversations_gives_the_companions_that_conversations_lines(madoi_home: Path) -> None:
    cast = listening_cast()
    async with running(cast) as (runtime, talk):
        conversations = runtime.parts.conversations
        first = conversations.active_id
        assert first is not None
        await chat(runtime, talk, "明日、高尾山に登ろうと思うんだ", akari_says="高尾山、紅葉がきれいな時期だね！")
        assert holding(runtime, "高尾山に登ろう") == ALL
        assert holding(runtime, "紅葉がきれい") == ALL  # Akari's own line, and the others heard it

        second = await conversations.new()
        assert holding(runtime, "高尾山") == []  # a new conversation: nothing of the one left
        await chat(runtime, talk, "おすすめのカレーのレシピを教えて")
        assert holding(runtime, "カレーのレシピ") == ALL

        await conversations.switch(first)
        assert holding(runtime, "高尾山に登ろう") == ALL
        assert holding(runtime, "紅葉がきれい") == ALL
        assert holding(runtime, "カレー") == []
        await chat(runtime, talk, "天気はどうかな")  # heard in the first conversation, not in the second
        await conversations.switch(second)
        assert holding(runtime, "カレーのレシピ") == ALL
        assert holding(runtime, "高尾山") == holding(runtime, "天気") == []
        await conversations.switch(first)
        asked = next(s.message for s in await runtime.store.messages(first) if "天気" in s.message.params.message)
        await conversations.revise(asked.params.id, "雨は降るかな")  # an edit in a conversation switched back to
        assert holding(runtime, "雨は降るかな") == ALL
        assert holding(runtime, "天気はどうかな") == []

    async with running(listening_cast()) as (runtime, talk):  # a restart opens the latest conversation, the first
        assert runtime.parts.conversations.active_id == first
        for line in ("高尾山に登ろう", "紅葉がきれい", "雨は降るかな"):
            assert holding(runtime, line) == ALL
        assert holding(runtime, "カレー") == []
        await runtime.parts.conversations.switch(second)
        assert holding(runtime, "カレーのレシピ") == ALL
        assert holding(runtime, "高尾山") == []
    cast.assert_used_up()


async def test_a_deleted_conversation_is_gone_from_every_companions_memory(madoi_home: Path) -> None:
    cast = listening_cast()
    async with running(cast) as (runtime, talk):
        conversations = runtime.parts.conversations
        secret = conversations.active_id
        assert secret is not None
        await chat(runtime, talk, "金庫の暗証番号は4721だよ", akari_says="4721ね、覚えておく！")
        kept = await conversations.new()
        await chat(runtime, talk, "今日はいい天気だね")
        await conversations.switch(secret)
        assert holding(runtime, "4721") == ALL

        assert await conversations.delete(secret) == kept  # the conversation on the screen is deleted
        assert holding(runtime, "4721") == []
        assert holding(runtime, "いい天気") == ALL
        doomed = await conversations.new()
        await chat(runtime, talk, "合言葉はやまびこ")
        await conversations.switch(kept)
        assert await conversations.delete(doomed) == kept  # one not on the screen
        rows = runtime.parts.memory._run(
            "SELECT COUNT(*) FROM companion_memory WHERE conversation_id IN (?, ?)", (secret, doomed))
        assert rows[0][0] == 0

    async with running(listening_cast()) as (runtime, talk):
        assert runtime.parts.conversations.active_id == kept
        assert holding(runtime, "いい天気") == ALL
        for conversation in (secret, doomed):  # nothing comes back, whichever conversation the companions follow
            for memory in (c.memory for c in runtime.parts.cast):
                await memory.follow(conversation)
            assert holding(runtime, "4721") == holding(runtime, "やまびこ") == []
    cast.assert_used_up()


async def test_a_memory_from_before_conversations_goes_under_the_conversations_of_its_messages(tmp_path: Path) -> None:
    database = tmp_path / "madoi.sqlite3"
    # The database as it was: the memory table one rolling list per companion; its third line's conversation was
    # deleted. Made with the statements of the time (tests/app/storage/old_schemas.py).
    kept, other = 1, 2
    said = [Message.create(from_="user", message=text) for text in ("高尾山に登ろう", "カレーを作ろう")]
    with closing(old_database(database, 3, "before conversations")) as old:
        old.executemany("INSERT INTO conversations (id, created_at, updated_at) VALUES (?, 0, 0)", [(kept,), (other,)])
        old.executemany("INSERT INTO messages (conversation_id, id, sender, recipients, text, created_at)"
                        " VALUES (?, ?, 'user', '[]', ?, 0)",
                        [(c, m.params.id, m.params.message) for c, m in zip((kept, other), said, strict=True)])
        lines = [(m.params.id, m.params.message) for m in said] + [("gone", "暗証番号は4721")]
        old.executemany("INSERT INTO companion_memory VALUES ('akari', ?, 'heard', 'user', 'User', ?, ?, 0)",
                        [(seq, text, mid) for seq, (mid, text) in enumerate(lines, 1)])
    store = ConversationStore(database)
    await store.open()
    memories = SqliteMemoryStore(database)
    akari = CompanionMemory("akari", store=memories)
    await akari.follow(kept)
    assert [e.text for e in akari.entries] == ["高尾山に登ろう"]
    await akari.remember(Message.create(from_="user", message="紅葉も見たい"), "User")
    await akari.follow(other)
    assert [e.text for e in akari.entries] == ["カレーを作ろう"]
    assert memories._run("SELECT COUNT(*) FROM companion_memory WHERE text LIKE '%4721%'", ())[0][0] == 0
    memories.close()
    await store.delete_conversation(other)  # while no companion runs (one whose card is gone, another process)
    reopened = CompanionMemory("akari", store=SqliteMemoryStore(database))  # upgraded once: opening again keeps it
    await reopened.follow(kept)
    assert [e.text for e in reopened.entries] == ["高尾山に登ろう", "紅葉も見たい"]
    await reopened.follow(other)
    assert len(reopened.entries) == 0
    await store.close()
