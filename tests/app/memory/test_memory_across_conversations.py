"""A companion remembers, in a new conversation, what it heard in an earlier one: the real runtime, its
SQLite database and search index, the sample companions on scripted chat models. What reaches the model is
asserted: the recalled line, dated, after the persona and the conversation, before the turn's instructions."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from app.runtime.runtime import Runtime
from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import ScriptedModel, reply_json, say
from companions.memory.recall import MemoryRecalled, spoken_date
from tests.app.conversation_search import lines_found
from tests.ui.scripted_runtime import scripted_cast, scripted_runtime


async def _said_and_ended(runtime: Runtime, talk: ConversationReadModel, text: str, to: list[str]) -> str:
    message = runtime.parts.conversations.send(text, to)
    await talk.wait_for(lambda v: v.status == "ended" and any(t.turn_id == message.params.id for t in talk.turns()),
                        timeout=30)
    await runtime.bus.drain()
    return message.params.id


async def test_a_companion_recalls_last_conversations_words_dated_in_a_new_one(madoi_home: Path) -> None:
    cast = scripted_cast()
    for model in cast.values():
        model.lane("vote").always(reply_json({"state": "listen", "importance": 0, "reason": ""}))
    akari: ScriptedModel = cast["akari"]
    akari.lane("chat").add(say("モチちゃん、かわいい名前！"), say("モチちゃんだよね！"))
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        recalled: list[MemoryRecalled] = []
        runtime.bus.subscribe("events", lambda item: recalled.append(item) if isinstance(item, MemoryRecalled)
                              else None, name="test-recalled", direct=True)
        try:
            first = runtime.parts.conversations.active_id
            assert first is not None
            assert runtime.parts.search is not None
            await _said_and_ended(runtime, talk, "うちの猫の名前はモチっていうんだ", ["akari"])
            await runtime.parts.conversations.new()  # the conversation left is indexed
            await lines_found(runtime.parts.search.engine, first, "猫の名前はモチ",
                              lambda lines: any("モチちゃん、かわいい名前！" in line for line in lines))
            assert [e.text for e in runtime.parts.cast.companions["akari"].memory.entries] == []  # a new context

            # As when the user comes back later: the knowledge folders are indexed and the query model is loaded
            # (a turn waits for recall 0.75 s at most: while the index's thread embeds a file, it goes without).
            await runtime.parts.search.reindex()
            hina = runtime.parts.cast.companions["hina"].recall
            assert hina is not None
            # The user told Akari alone; Hina heard only Akari's answer (to everyone).
            assert [i.text for i in await hina.port.recall("hina", "猫の名前はモチ")] == ["モチちゃん、かわいい名前！"]
            question = await _said_and_ended(runtime, talk, "ねえ、うちの猫の名前、覚えてる？", ["akari"])
            request = akari.requests_in("chat")[-1]
            texts = [m.text for m in request.messages]
            block = next(t for t in texts if "以前の会話" in t)
            today = spoken_date(dt.datetime.now().timestamp(), "ja")
            assert f"- {today}、userが「うちの猫の名前はモチっていうんだ」と言いました。" in block
            assert f"- {today}、あなたは「モチちゃん、かわいい名前！」と言いました。" in block
            # After the persona and the conversation (the cached prefix), before the turn's instructions.
            position = texts.index(block)
            assert request.messages[0].role == "system"
            assert position > 0
            assert any("ねえ、うちの猫の名前、覚えてる？" in t for t in texts[:position])
            assert position < len(texts) - 1
            akari_told = [r for r in recalled if r.companion_id == "akari" and r.message_id == question]
            assert len(akari_told) == 1
            assert {i.text for i in akari_told[0].items} >= {"うちの猫の名前はモチっていうんだ"}
        finally:
            talk.close()
