"""A stock filler that stands in for a companion's line is marked on the bus with the reason
(companions/companion/filler.py), and the mark keeps the reference framework's wire shape valid."""

from __future__ import annotations

import asyncio

from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.companion.filler import filler_reason
from companions.companion.participant import CompanionParticipant
from companions.conversation import ConversationConfig, ConversationManager
from companions.conversation.readmodel import ConversationChanged
from companions.llm.scripted import ScriptedModel, reply_json, say
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, MessageMetadata, MessageParams, parse_body, to_wire
from companions.wire.query_broker import QueryBroker
from tests.companions.running import running

QUESTION = "颯太さん、この地図はいつのもの？"


async def souta_answers(*lines: str) -> list[Message]:
    """Souta, named by the user's question, composes ``lines`` one attempt after the other; the published lines."""
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    published: list[Message] = []
    ended = asyncio.Event()
    bus.subscribe("messages", lambda m: published.append(m) if isinstance(m, Message) else None, name="test")
    bus.subscribe("events", lambda e: ended.set() if isinstance(e, ConversationChanged)
                  and e.view.status == "ended" else None, name="test-events")
    souta_card = load_cards([sample_cards_dir()]).by_id()["souta"]
    # without a sample line: the card's own sample would stand in before a stock filler
    card = souta_card.model_copy(update={"metadata": souta_card.metadata.model_copy(update={"sample": ""})})
    model = ScriptedModel("souta")
    model.lane("event_params").always(reply_json({"need_response": True, "needs_facts": False}))
    model.add(*(say(line) for line in lines))
    souta = Companion(card, model, bus=bus, queries=broker, language="ja")
    manager = ConversationManager(bus, config=ConversationConfig(turn_cap=1, early_speech=False),
                                  participants=[CompanionParticipant(souta)])
    async with running(manager, [souta], broker, bus):
        bus.publish(Message.create(from_="user", message=QUESTION, to=["souta"]))
        await asyncio.wait_for(ended.wait(), 10)
        await bus.drain()
        model.assert_used_up()
    return [m for m in published if m.params.from_ == "souta"]


async def test_a_filler_for_a_parroted_question_is_marked_with_the_reason() -> None:
    [line] = await souta_answers(QUESTION, QUESTION)
    assert line.params.message != QUESTION
    assert filler_reason(line) == "parrot"
    wire = to_wire(line)
    assert wire["params"]["metadata"]["filler"] == "parrot"
    # the reference framework's clients validate messages strictly: the mark sits in the free metadata record
    assert filler_reason(parse_body("messages", wire)) == "parrot"  # type: ignore[arg-type]


async def test_a_companion_s_own_line_carries_no_mark() -> None:
    [line] = await souta_answers("江戸後期の地図だと思うよ。")
    assert line.params.message == "江戸後期の地図だと思うよ。"
    assert filler_reason(line) is None


def test_a_mark_from_elsewhere_that_names_no_known_reason_is_not_a_filler() -> None:
    message = Message(params=MessageParams(id="m1", from_="akari", to=[], message="hi",
                                           metadata=MessageMetadata.model_validate({"filler": "<b>pwned</b>"})))
    assert filler_reason(message) is None
