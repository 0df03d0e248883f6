"""Joint ballots (companions/companion/joint_vote.py): six companions on a server that answers one request at a time
vote through one request a turn, every vote counted; alone on an endpoint, or with a slot each, a companion votes
with its own request as before."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from companions.cards.card import CompanionCard, load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.companion.joint_vote import JOINT_VOTE_NAME
from companions.companion.participant import CompanionParticipant
from companions.conversation import ConversationConfig, ConversationManager, ConversationReadModel
from companions.llm.capabilities import endpoint_capabilities, forget_endpoints
from companions.llm.openai_backend import OpenAIChatModel, RetryPolicy
from companions.testing.openai_server import OpenAITestServer, stall_reply, text_reply, tool_call_reply
from companions.testing.openai_server.profiles import ServerProfile
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, State
from companions.wire.query_broker import QueryBroker
from tests.companions.query_doubles import Voice
from tests.companions.running import running

CAST = ("akari", "hina", "souta", "mio", "ren", "yuki")  # the sample cards, and three more made from them


def cast_cards() -> list[CompanionCard]:
    samples = list(load_cards([sample_cards_dir()]).by_id().values())
    cards = []
    for index, card_id in enumerate(CAST):
        sample = samples[index % len(samples)]
        name = {"ja": card_id, "en": card_id.capitalize()}
        cards.append(sample if sample.id == card_id else sample.model_copy(
            update={"metadata": sample.metadata.model_copy(update={"id": card_id, "name": name})}))
    return cards


@pytest.fixture
async def serial_server() -> AsyncIterator[OpenAITestServer]:
    forget_endpoints()
    async with OpenAITestServer(profile=ServerProfile(name="one-slot", slots=1)) as server:
        yield server
    forget_endpoints()


def model_for(server: OpenAITestServer) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, model="test-model", api_key="x",
                           retry=RetryPolicy(max_retries=0, base_delay_s=0.01, max_delay_s=0.02))


def entry(state: str, importance: int, reason: str = "") -> dict[str, Any]:
    return {"state": state, "importance": importance, "reason": reason}


def joint(votes: dict[str, Any], closing: str = "none") -> str:
    return json.dumps({"closing": closing, "votes": votes}, ensure_ascii=False)


async def one_turn(server: OpenAITestServer, cards: Sequence[CompanionCard], text: str, *, deadline_s: float = 5.0,
                   ) -> tuple[ConversationReadModel, list[State], Message]:
    """``cards`` under the real manager, each on its own model of the server's one endpoint: the user says ``text``
    to everyone and the conversation ends after one line (direct turns off: every companion votes)."""
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    broker.register(Voice())
    states: list[State] = []
    bus.subscribe("states", lambda s: states.append(s) if isinstance(s, State) else None, name="test")
    read = ConversationReadModel()
    read.attach(bus)
    companions: list[Companion] = []
    for card in cards:
        companions.append(Companion(card, model_for(server), bus=bus, queries=broker, language="ja",
                                    roster=lambda: [c.metadata for c in companions]))
    config = ConversationConfig(vote_deadline_s=deadline_s, turn_cap=1, warm_after_s=None, direct_turns=False)
    manager = ConversationManager(bus, config=config, participants=[CompanionParticipant(c) for c in companions])
    opening = Message.create(from_="user", message=text)
    async with running(manager, companions, broker, bus):
        bus.publish(opening)
        await read.wait_for(lambda v: v.status == "ended", timeout=10.0)
        await bus.drain()
    for companion in companions:
        await companion.model.aclose()  # type: ignore[attr-defined]
    return read, states, opening


def request_names(server: OpenAITestServer) -> list[str]:
    names = []
    for request in server.chat_requests():
        response_format = request.body.get("response_format") or {}
        names.append(str((response_format.get("json_schema") or {}).get("name", "line")))
    return names


async def test_six_companions_on_a_serial_endpoint_vote_through_one_request(serial_server: OpenAITestServer) -> None:
    votes = {c: entry("listen", 2, "聞いていたい") for c in CAST}
    votes["ren"] = entry("speak", 7, "話したい")
    votes["hina"] = {"state": "shout", "importance": 3}  # invalid: listen, as an unusable vote
    del votes["yuki"]  # missing: listen
    serial_server.script(
        text_reply(joint(votes, "pre-closing")),
        tool_call_reply(("speak", {"message": "流れ星、見たいな！", "emotion": "happy"})),
        text_reply(json.dumps({"already_replied": False, "need_response": True, "wants_to_see": False})),
    )
    read, states, opening = await one_turn(serial_server, cast_cards(), "みんな、流れ星を見たことある？")
    await serial_server.wait_for_requests(3)
    assert request_names(serial_server) == [JOINT_VOTE_NAME, "line", "event_params"]
    turn = read.turns()[0]
    assert turn.speaker == "ren"
    shown = {v.companion: (v.status, v.state, v.importance, v.closing) for v in turn.votes}
    late = ("voted", "listen", 0, "none")  # unusable, as a vote the model could not give
    assert shown == {"akari": ("voted", "listen", 2, "pre-closing"), "hina": late,
                     "souta": ("voted", "listen", 2, "pre-closing"), "mio": ("voted", "listen", 2, "pre-closing"),
                     "ren": ("voted", "speak", 7, "pre-closing"), "yuki": late}
    assert all("no vote within" not in v.error for v in turn.votes)
    on_opening = [s.params.from_ for s in states if s.params.messageId == opening.params.id]
    assert sorted(on_opening) == sorted(CAST)  # each companion's own State, as every node counts it
    serial_server.assert_used_up()


async def test_the_joint_prompt_carries_each_companion_the_conversation_once_and_who_was_named(
        serial_server: OpenAITestServer) -> None:
    cards = cast_cards()[:3]
    serial_server.script(
        text_reply(joint({"akari": entry("listen", 1), "hina": entry("listen", 1), "souta": entry("speak", 9)})),
        tool_call_reply(("speak", {"message": "That map is from about 1850.", "emotion": "neutral"})),
        text_reply(json.dumps({"already_replied": False, "need_response": True, "wants_to_see": False})),
    )
    read, _, _ = await one_turn(serial_server, cards, "Souta, how old is that map?")
    await serial_server.wait_for_requests(3)
    assert [v.companion for v in read.turns()[0].votes if v.selected] == ["souta"]  # named: known without the model
    body = serial_server.chat_requests()[0].body
    messages = body["messages"]
    # The likely speaker's own prompt first (what the idle conversation warms and its line begins with: akari has
    # spoken least, then by id), the ballot after the conversation (later system text joins the last user message).
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].startswith('You are "Akari" (id: akari)')
    everything = "\n".join(m["content"] for m in messages)
    assert everything.count("(id: user): Souta, how old is that map?") == 1  # the conversation once
    ballot = messages[-1]["content"]
    assert all(f"- {name} (id: {name.lower()}): " in ballot for name in ("Akari", "Hina", "Souta"))
    assert ballot.index("Souta, how old") < ballot.index("akari, hina, souta")
    assert "Named: souta." in ballot
    assert 'at least "none"' in ballot  # the closing hint, in the message's language (English)
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["votes"]["required"] == ["akari", "hina", "souta"]
    serial_server.assert_used_up()


async def test_alone_on_an_endpoint_or_with_a_slot_each_a_companion_votes_with_its_own_request(
        serial_server: OpenAITestServer) -> None:
    endpoint_capabilities(serial_server.base_url, "test-model").gate.set_limit(2)  # a server with two slots
    cards = cast_cards()[:2]
    serial_server.script(
        text_reply(json.dumps(entry("speak", 8))),
        text_reply(json.dumps(entry("speak", 8))),
        text_reply(json.dumps({"already_replied": False, "need_response": True, "wants_to_see": False})),
        tool_call_reply(("speak", {"message": "こんばんは！", "emotion": "happy"})),
    )
    read, _, _ = await one_turn(serial_server, cards, "こんばんは")
    assert request_names(serial_server) == ["vote", "vote", "event_params", "line"]
    assert {v.companion: v.status for v in read.turns()[0].votes} == {"akari": "voted", "hina": "voted"}
    serial_server.assert_used_up()


async def test_a_joint_vote_past_the_deadline_is_missing_for_every_member_and_its_request_is_closed(
        serial_server: OpenAITestServer) -> None:
    fast = endpoint_capabilities(serial_server.base_url, "test-model")  # measured: the deadline is the configured one
    fast.record(prompt_tokens=1000, ttft_s=0.01, completion_tokens=100, generation_s=0.01)
    serial_server.script(
        stall_reply(),
        tool_call_reply(("speak", {"message": "いるよ！", "emotion": "happy"})),
        text_reply(json.dumps({"already_replied": False, "need_response": True, "wants_to_see": False})),
    )
    read, states, opening = await one_turn(serial_server, cast_cards()[:3], "みんな、いる？", deadline_s=0.5)
    turn = read.turns()[0]
    turn_deadline = float(turn.votes[0].error.removeprefix("no vote within ").removesuffix(" s"))
    assert turn_deadline < 2.0  # the measured endpoint's, not an unmeasured one's queue
    assert {v.companion: (v.status, v.error.split(" s")[0]) for v in turn.votes} == {
        c: ("missing", f"no vote within {turn_deadline:g}") for c in ("akari", "hina", "souta")}
    assert sorted(s.params.from_ for s in states if s.params.messageId == opening.params.id) == [
        "akari", "hina", "souta"]  # still one State each: listen
    # The user is answered all the same: every vote counted as listen, and the likely speaker (akari) answers.
    assert turn.selection_rule == "answers-user"
    assert turn.speaker == "akari"
    assert request_names(serial_server) == [JOINT_VOTE_NAME, "line", "event_params"]
    await asyncio.wait_for(serial_server.client_gone.wait(), 2.0)  # nobody waits for it: the request was closed
    serial_server.assert_used_up()
