"""Real companions (sample cards, worker, memory) driven by the real conversation manager through the adapter."""

from __future__ import annotations

import asyncio

from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.companion.participant import CompanionParticipant
from companions.conversation import ConversationConfig, ConversationManager
from companions.conversation.readmodel import ConversationChanged
from companions.llm.scripted import ScriptedModel, call, offers_tools, reply_json
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, State
from companions.wire.query_broker import QueryBroker
from tests.companions.query_doubles import Voice

# The sample cards' Japanese voices with their tuning, as the speak query carries them (companions/cards/card.py)
AKARI = "ja;rate=185;half_tone=2.5;all_pass=0.52"
HINA = "ja;rate=165;half_tone=-1.5;all_pass=0.55"


async def test_two_sample_companions_hold_a_turn_under_conversation_control() -> None:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    voice = Voice()
    broker.register(voice)
    published: list[object] = []
    ended = asyncio.Event()
    bus.subscribe(["messages", "states"], published.append, name="test")
    bus.subscribe("events", lambda e: ended.set() if isinstance(e, ConversationChanged)
                  and e.view.status == "ended" else None, name="test-events")

    cards = load_cards([sample_cards_dir()]).by_id()
    akari_model, hina_model = ScriptedModel("akari"), ScriptedModel("hina")
    akari_model.lane("vote").add(reply_json({"state": "speak", "importance": 7, "reason": "greeting"}))
    akari_model.lane("event_params").add(
        reply_json({"already_replied": False, "need_response": True, "wants_to_see": False}))
    akari_model.add(
        call("speak", {"message": "あかり: こんにちは！あかりです。\nひな: こんにちは", "emotion": "happy"},
             expect=offers_tools("speak")),
    )  # the composing turn ends once the line is planned: no request after it
    # Hina would rather listen, but akari's greeting names only her, so she is selected and answers.
    hina_model.lane("vote").always(reply_json({"state": "listen", "importance": 2}))
    hina_model.lane("event_params").add(reply_json({"need_response": True, "user_mood": "happy"}))
    hina_model.add(call("speak", {"message": "よろしくね、あかりちゃん。", "emotion": "happy"}))
    companions: list[Companion] = []
    roster = lambda: [c.metadata for c in companions]  # noqa: E731 - a tiny closure over the list
    for card, model in ((cards["akari"], akari_model), (cards["hina"], hina_model)):
        companions.append(Companion(card, model, bus=bus, queries=broker, language="ja", roster=roster))
    akari, hina = companions
    manager = ConversationManager(bus, config=ConversationConfig(vote_deadline_s=2.0, turn_cap=2),
                                  participants=[CompanionParticipant(c) for c in companions])
    for c in companions:
        await c.start()
    await manager.start()

    bus.publish(Message.create(from_="user", message="みんな、こんにちは", to=["akari", "hina"]))
    await asyncio.wait_for(ended.wait(), 10)
    await bus.drain()

    said = [(m.params.from_, m.params.message) for m in published if isinstance(m, Message)]
    assert said == [("user", "みんな、こんにちは"), ("akari", "こんにちは！あかりです。"),
                    ("hina", "よろしくね、あかりちゃん。")]
    # akari's line is voiced sentence by sentence while it is generated (early speech: parts of one line); hina's
    # one sentence is complete only with her line, so it is said whole, with its emotion.
    parts = [(q.params.from_, q.params.body) for q in voice.said]
    line_id = parts[0][1]["messageId"]
    assert parts == [
        ("akari", {"message": "こんにちは！", "emotion": "neutral", "voice": AKARI, "messageId": line_id, "part": 0}),
        ("akari", {"message": "あかりです。", "emotion": "neutral", "voice": AKARI, "messageId": line_id, "part": 1}),
        ("hina", {"message": "よろしくね、あかりちゃん。", "emotion": "happy", "voice": HINA})]
    votes = {(s.params.from_, s.params.state) for s in published if isinstance(s, State)}
    assert ("akari", "speak") in votes
    assert ("hina", "listen") in votes
    # The guidance of akari's card (not introduced yet, a reply is needed) reached her turn.
    guidance = akari_model.requests_in("")[0].messages[-1].text
    assert "短く自己紹介をする。" in guidance
    assert "ツールを使って返信する。" in guidance
    assert [(e.role, e.text) for e in akari.memory.entries] == [
        ("heard", "みんな、こんにちは"), ("said", "こんにちは！あかりです。"), ("heard", "よろしくね、あかりちゃん。")]
    assert [(e.speaker_name, e.text) for e in hina.memory.entries] == [
        ("user", "みんな、こんにちは"), ("あかり", "こんにちは！あかりです。"), ("ひな", "よろしくね、あかりちゃん。")]
    akari_model.assert_used_up()
    hina_model.assert_used_up()

    await manager.stop()
    for c in companions:
        await c.aclose()
    await broker.aclose()
    await bus.aclose()
