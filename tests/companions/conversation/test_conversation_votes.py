"""The one vote (companions/conversation/ballot.py): read once, onto the wire and back unchanged, counted by the
framework's facts, and collected by real companions on scripted models within their deadline."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import ValidationError

from companions.cards.card import load_cards, sample_cards_dir
from companions.common.tasks import TaskSet
from companions.companion.companion import Companion, vote_schema
from companions.companion.participant import CompanionParticipant
from companions.conversation import (
    ConversationConfig,
    ConversationManager,
    ConversationReadModel,
    TurnContext,
    Vote,
    VoteNeverComes,
)
from companions.conversation.selection import counted
from companions.conversation.vote_round import collect_votes
from companions.llm.scripted import ScriptedModel, asks_json, call, reply_json, stall
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, Query, QueryResult, State, parse_body, to_wire
from companions.wire.query_broker import QueryBroker
from tests.companions.running import running


def test_a_vote_is_validated_once_and_a_long_reason_is_cut_not_refused() -> None:
    with pytest.raises(ValidationError):
        Vote.model_validate({"state": "shout", "importance": 3})
    with pytest.raises(ValidationError):
        Vote.model_validate({"state": "speak", "importance": 11})
    with pytest.raises(ValidationError):
        Vote.model_validate({"state": "speak", "importance": 3, "closing": "later"})
    rambling = Vote.model_validate({"state": "speak", "importance": 3, "reason": "x" * 500})
    assert rambling.reason == "x" * 80
    with pytest.raises(ValidationError):  # frozen: what was read is what is counted
        rambling.importance = 9  # type: ignore[misc]


def test_a_vote_goes_onto_the_wire_as_the_reference_state_and_comes_back() -> None:
    vote = Vote(state="speak", importance=7, selected=True, closing="pre-closing", reason="I know this one")
    wire = to_wire(vote.to_state("akari", "m1"))
    assert wire == {"jsonrpc": "2.0", "method": "state.send", "params": {
        "from": "akari", "messageId": "m1", "state": "speak", "importance": 7, "selected": True,
        "closing": "pre-closing"}}  # the reference's shape: the reason is not on the wire
    back = parse_body("states", json.loads(json.dumps(wire)))
    assert isinstance(back, State)
    assert Vote.of_state(back, reason="voted on peer") == vote.model_copy(update={"reason": "voted on peer"})


def turn_of(message: Message, *, direct: bool, hint: str = "none") -> TurnContext:
    return TurnContext(turn_id=message.params.id, message=message, history=(message,), present=("akari", "hina"),
                       user_id="user", addressed_directly=direct, closing_hint=hint)  # type: ignore[arg-type]


def test_named_alone_is_selected_and_a_vote_is_never_less_closed_than_the_push() -> None:
    message = Message.create(from_="user", message="Akari?", to=["akari"])
    listening = Vote(state="listen", importance=2, reason="shy")
    assert counted(listening, turn_of(message, direct=False)) is listening
    named = counted(listening, turn_of(message, direct=True, hint="closing"))
    assert named == Vote(state="listen", importance=2, selected=True, closing="closing", reason="shy")
    terminal = Vote(state="speak", importance=4, closing="terminal")
    assert counted(terminal, turn_of(message, direct=False, hint="pre-closing")).closing == "terminal"


def test_the_model_fills_the_vote_schema_with_the_cards_event_parameters() -> None:
    card = load_cards([sample_cards_dir()]).by_id()["akari"]
    schema = vote_schema(card)
    assert issubclass(schema, Vote)
    fields = schema.model_json_schema()["properties"]
    assert {"state", "importance", "selected", "closing", "reason", "params"} <= fields.keys()
    assert "description" not in schema.model_json_schema()  # no developer prose sent to the model


class Voice:
    query_type = "speak"

    async def respond(self, query: Query) -> QueryResult:
        return QueryResult.ok(query.id, {"duration": 0.01})


async def test_real_companions_vote_garbage_is_listen_and_a_stalled_vote_is_missing_by_the_deadline() -> None:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    broker.register(Voice())
    states: list[State] = []
    bus.subscribe("states", lambda s: states.append(s) if isinstance(s, State) else None, name="test")
    read = ConversationReadModel()
    read.attach(bus)
    cards = load_cards([sample_cards_dir()]).by_id()
    models = {n: ScriptedModel(n) for n in ("akari", "hina", "souta")}
    models["akari"].lane("vote").add(reply_json({"state": "speak", "importance": 8, "reason": "週末の話がしたい"},
                                                expect=asks_json("vote")))
    models["akari"].lane("event_params").add(
        reply_json({"already_replied": False, "need_response": True, "wants_to_see": False}))
    models["akari"].add(call("speak", {"message": "山に行ったよ！", "emotion": "happy"}))
    models["hina"].lane("vote").add(reply_json("{{{ not json"), reply_json("still not json"))  # repaired once: listen
    models["souta"].lane("vote").add(stall())  # never answers: the deadline holds the round
    companions: list[Companion] = []
    for name, model in models.items():
        companions.append(Companion(cards[name], model, bus=bus, queries=broker, language="ja",
                                    roster=lambda: [c.metadata for c in companions]))
    manager = ConversationManager(bus, config=ConversationConfig(vote_deadline_s=0.5, turn_cap=1,
                                                                 warm_after_s=None),
                                  participants=[CompanionParticipant(c) for c in companions])
    async with running(manager, companions, broker, bus):
        opening = Message.create(from_="user", message="週末は何してた？")
        bus.publish(opening)
        view = await read.wait_for(lambda v: v.status == "ended", timeout=10.0)
        await bus.drain()
    assert view.ended_reason == "turn-cap"
    first = read.turns()[0]
    assert first.speaker == "akari"
    shown = {v.companion: (v.status, v.state, v.importance, v.reason) for v in first.votes}
    assert shown == {"akari": ("voted", "speak", 8, "週末の話がしたい"),
                     "hina": ("voted", "listen", 0, "no usable vote from the model"),  # garbage, repaired once
                     "souta": ("missing", "listen", 0, "")}  # its model never answered
    # One State per voter, as every node counts it: souta's missing vote goes out as listen.
    on_opening = {s.params.from_: (s.params.state, s.params.importance) for s in states
                  if s.params.messageId == opening.params.id}
    assert on_opening == {"akari": ("speak", 8), "hina": ("listen", 0), "souta": ("listen", 0)}
    assert len([s for s in states if s.params.messageId == opening.params.id]) == 3
    assert companions[1].structured_stats.fallbacks == 1
    for model in models.values():
        model.assert_used_up()


async def test_a_vote_that_never_comes_is_missing_not_a_failure(caplog: pytest.LogCaptureFixture) -> None:
    # A companion elsewhere whose peer left (or that lets every vote pass) is expected: the round counts its vote as
    # missing; it is no task failure, logged with a traceback on every turn.
    async def gone() -> Vote:
        raise VoteNeverComes("its peer left")

    async def speaks() -> Vote:
        return Vote(state="speak", importance=7)

    owner = TaskSet("votes")
    outcomes = await collect_votes({"far": gone, "near": speaks}, deadlines={"far": 1.0, "near": 1.0}, owner=owner)
    assert outcomes["far"].status == "missing"
    assert outcomes["far"].vote.state == "listen"
    assert outcomes["near"].status == "voted"
    await owner.wait()
    assert owner.failures == 0
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_each_voter_is_missing_at_its_own_deadline() -> None:
    # deadline.py gives a companion elsewhere a longer wait than this app's own: the round waits for it alone.
    async def never() -> Vote:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def late() -> Vote:
        await asyncio.sleep(0.3)
        return Vote(state="speak", importance=3)

    owner = TaskSet("votes")
    outcomes = await collect_votes({"here": never, "far": late}, deadlines={"here": 0.1, "far": 2.0}, owner=owner)
    assert (outcomes["here"].status, outcomes["far"].status) == ("missing", "voted")
    assert outcomes["here"].latency_s < 0.3 <= outcomes["far"].latency_s
    await owner.aclose()
