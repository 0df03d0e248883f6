"""A companion that joins through the bridge: real `websockets` clients on loopback, the real bus, broker and
conversation manager. The local companion is a scripted participant (the Participant port)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from app.bridge import BridgeServer
from companions.companion.guests import BridgeGuestsChanged
from companions.conversation import LISTEN, ComposedLine, ConversationManager, Participant, TurnContext, Vote
from companions.conversation.config import ConversationConfig
from companions.conversation.readmodel import ConversationReadModel
from companions.wire.bus import BusItem, InProcessBus
from companions.wire.protocol import Closing, Message, State, to_wire
from companions.wire.query_broker import QueryBroker

KUMO = {"id": "kumo", "name": "Kumo", "personality": "calm, likes clouds", "story": "lives on a hill",
        "sample": "Clouds are slow."}


class Local(Participant):
    """This app's own companion, scripted: its votes and lines are given in order (then it listens)."""

    def __init__(self, companion_id: str, votes: list[Vote], lines: list[str]) -> None:
        self.id = companion_id
        self.votes, self.lines = votes, lines
        self.voted_on: list[str] = []

    async def vote(self, turn: TurnContext) -> Vote:
        self.voted_on.append(turn.history[-1].params.message)  # what it heard last: the turn's message
        return self.votes.pop(0) if self.votes else LISTEN

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        return ComposedLine(self.lines.pop(0)) if self.lines else None


@contextlib.asynccontextmanager
async def talk(akari: Local, **config: Any) -> AsyncIterator[tuple[InProcessBus, ConversationManager, BridgeServer]]:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    manager = ConversationManager(bus, user_id="user", participants=[akari], config=ConversationConfig(
        **{"vote_deadline_s": 1.0, "warm_after_s": None, **config}))
    bridge = BridgeServer(bus, broker, port=0, reserved_ids=lambda: {"akari"}, roster=manager)
    for part in (broker, manager, bridge):
        await part.start()
    try:
        yield bus, manager, bridge
    finally:
        for part in (bridge, manager, broker):
            await part.stop()
        await bus.aclose()


def client(bridge: BridgeServer, dialect: str | None = None) -> connect:
    return connect(f"ws://127.0.0.1:{bridge.port}" + (f"/?dialect={dialect}" if dialect else ""), proxy=None)


async def frame(ws: ClientConnection, wanted: Callable[[dict[str, Any]], bool], timeout: float = 5.0) -> dict[str, Any]:
    """The next frame ``wanted`` takes (earlier ones are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            data: dict[str, Any] = json.loads(await ws.recv())
            if wanted(data):
                return data


def is_error(data: dict[str, Any]) -> bool:
    return "error" in data


def said(by: str) -> Callable[[dict[str, Any]], bool]:
    return lambda d: d.get("method") == "message.send" and d["params"]["from"] == by


def holds_floor(companion: str) -> Callable[[dict[str, Any]], bool]:
    return lambda d: (d.get("topic") == "turns" and d["body"]["params"]["phase"] == "composing"
                      and d["body"]["params"].get("speaker") == companion)


async def announce(ws: ClientConnection, metadata: Any) -> dict[str, Any]:
    await ws.send(json.dumps({"topic": "metadata", "body": metadata}))
    return await frame(ws, lambda d: d.get("topic") == "metadata" or is_error(d))


def state(message_id: str, speech: str, importance: int, companion: str = "kumo") -> dict[str, Any]:
    return to_wire(State.create(from_=companion, message_id=message_id, state=speech,  # type: ignore[arg-type]
                                importance=importance))


def line(text: str, companion: str = "kumo") -> str:
    message = Message.create(from_=companion, message=text, to=["user", "akari"])
    return json.dumps({"topic": "messages", "body": to_wire(message)})


async def test_a_companion_through_the_bridge_votes_speaks_and_its_line_continues_the_conversation() -> None:
    akari = Local("akari", [Vote(state="listen", importance=3), Vote(state="speak", importance=8)],
                  ["Kumo, clouds are not slow at all!"])
    async with talk(akari) as (bus, manager, bridge), client(bridge) as ws:
        joined: list[BridgeGuestsChanged] = []
        bus.subscribe("events", lambda e: joined.append(e) if isinstance(e, BridgeGuestsChanged) else None,
                      name="test")
        conversation = ConversationReadModel()
        conversation.attach(bus)
        ack = await announce(ws, KUMO)
        assert ack == {"topic": "metadata", "body": {"ok": True, "id": "kumo"}}
        assert manager.present == {"akari", "kumo"}

        greeting = Message.create(from_="user", message="What is everyone doing tonight?")
        bus.publish(greeting)
        await frame(ws, said("user"))  # the reference's bare message.send, as every client gets it
        # The reference's companions publish their votes as an array of states.
        await ws.send(json.dumps({"topic": "states", "body": [state(greeting.params.id, "speak", 7)]}))
        composing = await frame(ws, holds_floor("kumo"))
        assert composing["body"]["params"]["id"] == greeting.params.id
        await ws.send(line("Watching the clouds drift by."))

        answer = await frame(ws, said("akari"))  # the next turn opened on Kumo's line, and Akari answered it
        assert answer["params"]["message"] == "Kumo, clouds are not slow at all!"
        assert akari.voted_on == ["What is everyone doing tonight?", "Watching the clouds drift by."]
        started = time.monotonic()
        view = await conversation.wait_for(lambda v: v.status == "ended", timeout=10)  # Kumo stays silent
        assert time.monotonic() - started < 5  # its missing vote cost the 1 s deadline, like anyone's
        turns = conversation.turns()
        assert [t.speaker for t in turns] == ["kumo", "akari", None]
        assert turns[0].vote_of("kumo").status == "voted"  # type: ignore[union-attr]
        assert turns[2].vote_of("kumo").status == "missing"  # type: ignore[union-attr]
        assert view.ended_reason == "no-speaker"
        await bus.drain()
        assert [[g.id for g in e.guests] for e in joined] == [["kumo"]]
        assert joined[0].guests[0].name == "Kumo"
        assert joined[0].guests[0].peer.startswith("bridge:")


async def test_a_companion_through_the_bridge_is_addressed_by_name_without_a_vote() -> None:
    akari = Local("akari", [], [])
    async with talk(akari) as (bus, _, bridge), client(bridge, "madoi") as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"metadata": KUMO}}))
        welcome = await frame(ws, lambda d: d.get("topic") == "hello")
        assert welcome["body"]["companion"] == "kumo"
        conversation = ConversationReadModel()
        conversation.attach(bus)
        question = Message.create(from_="user", message="Kumo, what do clouds taste like?")
        bus.publish(question)
        await frame(ws, holds_floor("kumo"))
        await ws.send(line("Like cold cotton."))
        view = await conversation.wait_for(lambda v: v.status == "ended", timeout=10)
        assert [t.speaker for t in conversation.turns()][:1] == ["kumo"]
        assert conversation.turns()[0].selection_rule == "named"
        assert akari.voted_on == ["Like cold cotton."]  # not asked on the question: Kumo was named
        assert view.ended_reason == "no-speaker"


async def test_a_companion_that_disconnects_mid_turn_counts_as_a_missing_vote_and_leaves() -> None:
    akari = Local("akari", [Vote(state="listen", importance=2)], ["I'm here."])
    async with talk(akari, vote_deadline_s=30.0) as (bus, manager, bridge):
        conversation = ConversationReadModel()
        conversation.attach(bus)
        async with client(bridge) as ws:
            await announce(ws, KUMO)
            bus.publish(Message.create(from_="user", message="Anyone there?"))
            await frame(ws, said("user"))
        started = time.monotonic()
        view = await conversation.wait_for(lambda v: v.status == "ended", timeout=10)
        assert time.monotonic() - started < 5  # not the 30 s deadline: its vote failed when it left
        first = conversation.turns()[0]
        vote = first.vote_of("kumo")
        assert vote is not None
        assert vote.status in ("missing", "invalid")
        assert vote.state == "listen"
        assert (first.speaker, first.selection_rule) == ("akari", "answers-user")  # the user is answered all the same
        assert manager.present == {"akari"}
        assert "kumo" not in view.present


@pytest.mark.parametrize(("metadata", "why"), [
    ({**KUMO, "id": "akari"}, "companion id 'akari' is taken"),  # a local companion's
    ({**KUMO, "id": "user"}, "companion id 'user' is taken"),  # the user's
    ({**KUMO, "id": "user_yamada"}, "companion id 'user_yamada' is taken"),  # a user id's form
    ({**KUMO, "mood": "happy"}, "invalid metadata: mood: Extra inputs are not permitted"),
    ({"id": "kumo"}, "invalid metadata: name: Field required"),
    ({**KUMO, "personality": "x" * 5000}, "invalid metadata: personality: String should have at most 4000"),
    ("kumo", "invalid metadata: body: Input should be a valid dictionary"),
    ({**KUMO, "id": "ku mo"}, "invalid metadata: id: String should match pattern"),
])
async def test_bad_metadata_gets_an_error_frame_and_the_connection_lives_on(
        metadata: Any, why: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="app.bridge")
    async with talk(Local("akari", [], [])) as (_, manager, bridge), client(bridge) as ws:
        refused = await announce(ws, metadata)
        assert refused["error"]["message"].startswith(why), refused
        assert any(why in r.getMessage() for r in caplog.records)
        assert manager.present == {"akari"}
        assert (await announce(ws, KUMO))["body"] == {"ok": True, "id": "kumo"}  # it lives on


async def test_a_companions_connection_speaks_only_as_its_companion() -> None:
    async with talk(Local("akari", [], [])) as (bus, manager, bridge), client(bridge) as ws, \
            client(bridge) as other:
        await announce(ws, KUMO)
        taken = await announce(other, {**KUMO, "name": "Another Kumo"})  # another client's companion
        assert taken["error"]["message"].startswith("companion id 'kumo' is taken")
        second = await announce(ws, {**KUMO, "id": "sora", "name": "Sora"})
        assert second["error"]["message"] == "this connection already speaks for 'kumo': one companion per connection"
        for forged in ("akari", "user", "user_yamada"):
            await ws.send(line("I am someone else.", companion=forged))
            error = await frame(ws, is_error)
            assert error["error"]["code"] == -32002
            assert error["error"]["message"].startswith(f"forged from {forged!r}")
        forged_query = {"jsonrpc": "2.0", "method": "query.send", "id": "q0",
                        "params": {"from": "akari", "type": "vision"}}
        await ws.send(json.dumps({"topic": "queries", "body": forged_query}))
        assert (await frame(ws, is_error))["error"]["message"].startswith("forged from 'akari'")
        # Its own companion's query goes to the broker (which asks the user for a guest: companions/trust/policy.py);
        # here the app has no camera: the answer says so, to this connection alone.
        query = {"jsonrpc": "2.0", "method": "query.send", "id": "q1", "params": {"from": "kumo", "type": "vision"}}
        await ws.send(json.dumps({"topic": "queries", "body": query}))
        result = await frame(ws, lambda d: d.get("id") == "q1" and "method" not in d)  # the bare JSON-RPC result
        assert result == {"jsonrpc": "2.0", "id": "q1", "error": "unsupported query type: vision"}
        # Another client cannot speak as the companion either, nor take its id (or the local one's) as its own.
        await other.send(line("I am Kumo.", companion="kumo"))
        assert (await frame(other, is_error))["error"]["message"].startswith("forged from 'kumo'")
        for identity in ("kumo", "akari"):
            async with client(bridge, "madoi") as third:
                await third.send(json.dumps({"topic": "hello", "body": {"id": identity}}))
                assert (await frame(third, is_error))["error"]["message"] == f"identity {identity!r} is not available"
        seen: list[BusItem] = []
        bus.subscribe("messages", seen.append, name="test")
        await ws.send(line("Only me."))
        await frame(ws, said("kumo"))
        assert [m.params.message for m in seen if isinstance(m, Message)] == ["Only me."]
        assert manager.present == {"akari", "kumo"}
