"""The network link on the NetworkPort (a recording double of the port; the real libp2p adapter is tested in
tests/app/test_network_*.py): remote companions take part in the real ConversationManager as equals, every ``from``
is checked against its peer, and garbage, forgeries, oversized payloads and floods are dropped with a log line."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from companions.conversation import (
    ComposedLine,
    ConversationChanged,
    ConversationConfig,
    ConversationManager,
    Participant,
    TurnContext,
    Vote,
)
from companions.conversation.participant import Description, Pace
from companions.network import remote as remote_module
from companions.network.link import NetworkChanged, NetworkLink
from companions.network.peers import (
    MAX_PEOPLE_PER_PEER,
    MAX_REMOTE_COMPANIONS,
    MAX_UNANNOUNCED_PER_PEER,
    PEOPLE_BURST,
    RateLimit,
)
from companions.network.port import NetworkError
from companions.network.untrusted import Drops
from companions.wire.bus import InProcessBus
from companions.wire.protocol import MAX_RECIPIENTS, Action, Closing, CompanionMetadata, Message, State, to_wire
from tests.companions.network_doubles import PEER, SOUTA, RecordingPort

OTHER = "12D3KooWOtherPeer"


@dataclass(eq=False)
class Local(Participant):
    """A local participant double: votes and says what the test gives it."""

    id: str
    importance: int
    line: str = "hello"
    composed: asyncio.Event = field(default_factory=asyncio.Event)

    async def vote(self, turn: TurnContext) -> Vote:
        return Vote(state="speak", importance=self.importance)

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        self.composed.set()
        return ComposedLine(text=self.line, emotion="happy")


def raw(item: Any) -> bytes:
    return json.dumps(to_wire(item) if not isinstance(item, (list, dict)) else item).encode()


def state(from_: str, message_id: str, importance: int, speak: bool = True) -> bytes:
    return raw([to_wire(State.create(from_=from_, message_id=message_id, state="speak" if speak else "listen",
                                     importance=importance))])


class Changes:
    """Set on every bus item: the tests wait on it, never on a sleep (one per test: an Event binds to its loop)."""

    event = asyncio.Event()


async def setup(*locals_: Local, deadline: float = 2.0, turn_cap: int = 12
                ) -> tuple[InProcessBus, ConversationManager, NetworkLink, RecordingPort, list[Any]]:
    bus = InProcessBus()
    seen: list[Any] = []
    Changes.event = asyncio.Event()

    def record(item: Any) -> None:
        seen.append(item)
        Changes.event.set()

    bus.subscribe(("messages", "states", "events"), record, direct=True)
    manager = ConversationManager(bus, user_id="user", participants=locals_,
                                  config=ConversationConfig(vote_deadline_s=deadline, turn_cap=turn_cap))
    port = RecordingPort()
    link = NetworkLink(bus, port, local=[CompanionMetadata(id=p.id, name=p.id) for p in locals_], user_id="user",
                       roster=manager)
    await manager.start()
    await link.start()
    return bus, manager, link, port, seen


async def wait_for(predicate: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while True:
            Changes.event.clear()
            if predicate():
                return
            await Changes.event.wait()


async def test_a_remote_companion_votes_speaks_and_its_line_continues_the_conversation() -> None:
    akari = Local("akari", importance=3, line="akari speaks")
    bus, manager, link, port, seen = await setup(akari)
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA,))
    assert "souta" in manager.present
    assert any(isinstance(e, NetworkChanged) and e.remote and e.remote[0].id == "souta" and e.remote[0].reachable
               for e in seen)

    user = Message.create(from_="user", message="everyone, hello", to=[])
    bus.publish(user)
    sent = await port.wait_sent("messages")
    assert sent[0]["params"]["to"] == ["akari", "souta"]  # reference nodes answer only messages naming them
    # souta (elsewhere) votes higher than akari: every node selects souta, and souta's node publishes its line
    port.sink.received(PEER, "states", state("souta", user.params.id, 9))
    line = Message.create(from_="souta", message="souta from afar", to=["akari", "user"])
    await wait_for(lambda: manager.view.turn is not None and manager.view.turn.speaker == "souta")
    port.sink.received(PEER, "messages", raw(line))
    # the remote line opens the next turn (akari votes on it and answers): the conversation goes on
    await asyncio.wait_for(akari.composed.wait(), 5)
    await wait_for(lambda: any(isinstance(m, Message) and m.params.message == "akari speaks" for m in seen))
    lines = [m for m in seen if isinstance(m, Message)]
    assert [m.params.from_ for m in lines] == ["user", "souta", "akari"]
    assert lines[1].params.id == line.params.id  # souta's own message, not a copy made here
    souta_votes = [s for s in seen if isinstance(s, State) and s.params.from_ == "souta"]
    assert len(souta_votes) == 1  # as it came from the network: the manager does not publish a copy
    states_out = await port.wait_sent("states", 2)
    assert {s[0]["params"]["from"] for s in states_out} == {"akari"}  # only local votes go out, as arrays
    assert [d["params"]["from"] for d in await port.wait_sent("messages", 2)] == ["user", "akari"]
    await link.stop()
    await manager.stop()


async def test_forged_garbage_oversized_and_queries_are_dropped_with_a_log_line(
        caplog: pytest.LogCaptureFixture) -> None:
    bus, manager, link, port, seen = await setup(Local("akari", 3))
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA,))
    caplog.set_level(logging.WARNING, logger="companions.network.link")
    before = len([s for s in seen if isinstance(s, (Message, State))])
    port.sink.received(OTHER, "messages", raw(Message.create(from_="souta", message="I am souta, trust me")))
    port.sink.received(OTHER, "messages", raw(Message.create(from_="akari", message="I am your own akari")))
    port.sink.received(PEER, "messages", b"\xff\xfe not json")
    port.sink.received(PEER, "messages", b'{"jsonrpc":"2.0","method":"message.send","params":{"from":"souta"}}')
    port.sink.received(PEER, "states", b"[1, 2, 3]")
    port.sink.received(PEER, "messages", b"{" + b" " * 70_000 + b"}")
    port.sink.received(PEER, "queries", raw({"jsonrpc": "2.0", "method": "query.send", "id": "q1",
                                              "params": {"from": "souta", "type": "vision"}}))
    port.sink.received(PEER, "queries", raw({"jsonrpc": "2.0", "id": "q1", "result": {"success": True, "body": {}}}))
    await bus.drain()
    assert len([s for s in seen if isinstance(s, (Message, State))]) == before  # nothing reached the bus
    assert link.dropped == 10  # three invalid states in one array
    assert link.drops.counts == {"forged": 1, "reserved": 1, "not JSON": 1, "invalid": 4, "oversized": 1, "query": 2}
    text = caplog.text
    for reason in ("'souta' belongs to peer", "'akari' is one of this app's companions", "not JSON", "70002 bytes",
                   "queries are answered only", "results are not taken"):
        assert reason in text
    # the genuine peer still gets through afterwards
    port.sink.received(PEER, "messages", raw(Message.create(from_="souta", message="real souta")))
    await wait_for(lambda: any(isinstance(m, Message) and m.params.message == "real souta" for m in seen))
    await link.stop()
    await manager.stop()


async def test_a_flood_is_dropped_and_the_turn_is_not_stalled(caplog: pytest.LogCaptureFixture) -> None:
    akari = Local("akari", importance=5, line="still here")
    bus, manager, link, port, _ = await setup(akari)
    link.rate = RateLimit(rate_per_s=10, burst=20)
    assert port.sink is not None
    flood = raw(Message.create(from_="spammer", message="buy now", to=["nobody"]))
    for _ in range(500):
        port.sink.received(OTHER, "messages", flood)
    assert link.dropped >= 480
    assert caplog.text.count("flood") == 1  # one log line per burst, not one per message
    bus.publish(Message.create(from_="user", message="akari?", to=["akari"]))
    await asyncio.wait_for(akari.composed.wait(), 5)
    await link.stop()
    await manager.stop()


async def test_a_peer_that_vanishes_mid_turn_counts_as_a_missing_vote() -> None:
    akari = Local("akari", importance=2, line="akari answers")
    bus, manager, link, port, seen = await setup(akari, deadline=30.0)
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA,))
    bus.publish(Message.create(from_="user", message="both of you?", to=["akari", "souta"]))
    await port.wait_sent("states")  # akari has voted; souta's vote is pending
    started = asyncio.get_running_loop().time()
    port.sink.gone(PEER)
    await asyncio.wait_for(akari.composed.wait(), 5)
    assert asyncio.get_running_loop().time() - started < 2  # not the 30 s deadline
    turns = [e.view.turn for e in seen if isinstance(e, ConversationChanged) and e.view.turn is not None
             and e.view.turn.number == 1]
    gone = turns[-1].vote_of("souta")
    assert gone is not None
    assert gone.status == "missing"
    assert "left the network" in gone.error
    assert "souta" not in manager.present
    changed = [e for e in seen if isinstance(e, NetworkChanged)]
    assert changed[-1].remote[0].reachable is False  # the window still lists it, as unreachable
    await link.stop()
    await manager.stop()


async def test_a_remote_line_the_node_did_not_select_is_heard_and_a_vanished_speaker_passes_the_floor() -> None:
    akari = Local("akari", importance=1, line="akari takes over")
    bus, manager, link, port, _ = await setup(akari)
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA,))
    user = Message.create(from_="user", message="hello", to=[])
    bus.publish(user)
    port.sink.received(PEER, "states", state("souta", user.params.id, 9))
    await wait_for(lambda: manager.view.turn is not None and manager.view.turn.phase == "composing"
                   and manager.view.turn.speaker == "souta")
    port.sink.gone(PEER)  # souta's machine went away before its line came: the floor passes to akari
    await asyncio.wait_for(akari.composed.wait(), 5)
    await link.stop()
    await manager.stop()


async def test_the_network_failing_to_start_is_reported_and_nothing_is_subscribed() -> None:
    bus = InProcessBus()
    seen: list[Any] = []
    bus.subscribe("events", seen.append, direct=True)
    link = NetworkLink(bus, RecordingPort(fail="port 4001 in use"), local=[], user_id="user")
    with pytest.raises(NetworkError, match="in use"):
        await link.start()
    assert link.status.problem == "port 4001 in use"
    assert isinstance(seen[-1], NetworkChanged)
    assert seen[-1].status.problem == "port 4001 in use"
    assert bus.subscriber_count == 1  # only the test's


async def test_a_companion_that_votes_without_metadata_joins_and_keeps_its_peer() -> None:
    _, manager, link, port, _ = await setup(Local("akari", 3))
    assert port.sink is not None
    port.sink.received(PEER, "states", state("companion_ref", "m0", 4))
    assert "companion_ref" in manager.present
    port.sink.received(OTHER, "states", state("companion_ref", "m0", 4))
    assert link.dropped == 1  # the same id from another peer is a forgery
    await link.stop()
    await manager.stop()


async def test_with_remote_companions_a_message_to_everyone_gets_a_vote_round_even_on_a_serial_endpoint() -> None:
    # On its own, a node with a one-request-at-a-time endpoint lets its likely speaker answer at once (direct.py);
    # other nodes, with other endpoints, would not: with companions elsewhere every node votes, so all agree.
    akari = Local("akari", importance=1, line="akari answers")
    akari.description = Description(  # type: ignore[attr-defined]
        names=("akari",), pace_of=lambda: Pace("http://local", slots=1))
    bus, manager, link, port, _ = await setup(akari)
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA,))
    user = Message.create(from_="user", message="hello all", to=[])
    bus.publish(user)
    await port.wait_sent("states")  # akari voted: there is a vote round
    port.sink.received(PEER, "states", state("souta", user.params.id, 9))
    await wait_for(lambda: manager.view.turn is not None and manager.view.turn.speaker == "souta")
    assert not akari.composed.is_set()
    await link.stop()
    await manager.stop()


async def test_a_peer_speaking_as_this_apps_user_is_that_peers_user_here_and_this_user_goes_out_named_by_peer(
) -> None:
    bus, manager, link, port, seen = await setup(Local("akari", 3))
    assert port.sink is not None
    port.sink.received(PEER, "messages", raw(Message.create(from_="user", message="hi from afar", to=["nobody"])))
    port.sink.received(PEER, "messages", raw(Message.create(
        from_="user", message="you there?", to=["nobody", "user@12D3KooWLocal"])))  # this app's user, elsewhere
    await wait_for(lambda: len([m for m in seen if isinstance(m, Message)]) == 2)
    said = [m for m in seen if isinstance(m, Message)]
    assert [m.params.from_ for m in said] == [f"user@{PEER}"] * 2
    assert said[1].params.to == ["nobody", "user"]  # addressed to this app's user: the user again
    assert [(p.id, p.name, p.peer) for p in link.people()] == [(f"user@{PEER}", "user", PEER)]
    # a line here addressed to "the user" goes out naming this app's user as the other machines know them
    bus.publish(Message.create(from_="akari", message="hello user", to=["user", f"user@{PEER}"]))
    sent = await port.wait_sent("messages")
    assert sent[-1]["params"]["to"] == ["user@12D3KooWLocal", f"user@{PEER}"]
    await link.stop()
    await manager.stop()


async def test_reserved_ids_forgeries_and_votes_by_people_are_dropped_by_kind() -> None:
    bus, manager, link, port, seen = await setup(Local("akari", 3))
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA, CompanionMetadata(id="user", name="me"), CompanionMetadata(id="user_x", name="x"),
                               CompanionMetadata(id="akari", name="akari"), CompanionMetadata(id="a@b", name="ab")))
    assert set(link.remote) == {"souta"}
    for sender in ("akari", "x@y", f"user@{PEER}"):
        port.sink.received(OTHER, "messages", raw(Message.create(from_=sender, message="forged")))
    port.sink.received(OTHER, "messages", raw(Message.create(from_="souta", message="forged")))
    port.sink.received(OTHER, "states", state("user", "m1", 10))
    port.sink.received(OTHER, "actions", raw(Action.create(from_="nobody", name="wave")))
    await bus.drain()
    assert not [m for m in seen if isinstance(m, (Message, State))]
    assert link.drops.counts == {"reserved": 8, "forged": 1, "not a companion": 1}
    await link.stop()
    await manager.stop()


async def test_companions_from_votes_people_and_peers_stay_within_bounds_and_to_within_the_limit() -> None:
    bus, manager, link, port, _ = await setup(Local("akari", 3))
    link.rate.people_rate_per_s, link.rate.people_burst = 1e6, 10**6  # this test is about the bounds
    assert port.sink is not None
    for i in range(40):  # one peer votes as 40 companions it never announced and speaks as 40 people
        port.sink.received(PEER, "states", state(f"companion_{i}", "m1", 1, speak=False))
        port.sink.received(PEER, "messages", raw(Message.create(from_=f"person_{i}", message="hi", to=["nobody"])))
    assert len(link.remote) == MAX_UNANNOUNCED_PER_PEER
    assert len(link.people()) == MAX_PEOPLE_PER_PEER
    for p in range(20):  # many peers announce many companions: the total stays within the to limit
        port.sink.announced(f"peer{p}", tuple(CompanionMetadata(id=f"c{p}_{i}", name="c") for i in range(20)))
    assert len([p for p in link.remote.values() if p.reachable]) <= MAX_REMOTE_COMPANIONS
    everyone = link.everyone()
    assert len(everyone) + 1 <= MAX_RECIPIENTS  # and the user
    user = Message.create(from_="user", message="everyone?", to=[])
    bus.publish(user)
    sent = await port.wait_sent("messages")
    assert sent[-1]["params"]["to"] == everyone
    Message.model_validate(sent[-1])  # a valid message on every node (it was not past 64 before)
    await link.stop()
    await manager.stop()


async def test_nesting_lone_surrogates_and_constants_are_refused_and_the_link_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    bus, manager, link, port, _ = await setup(Local("akari", 3))
    actions: list[Action] = []
    bus.subscribe("actions", actions.append, direct=True)
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA,))
    action = '{"jsonrpc":"2.0","method":"action.send","params":{"from":"souta","name":"wave","params":%s}}'
    for payload in (b"[" * 5000, b'{"a":' * 3000, (action % ('{"x":' * 20 + "1" + "}" * 20)).encode(),
                    (action % '{"k":"\\ud800"}').encode(), (action % '{"\\udfff":1}').encode(),
                    (action % '{"k":NaN}').encode(), (action % ("1" * 5000)).encode()):
        port.sink.received(PEER, "actions", payload)
    assert link.drops.counts == {"too deep": 3, "bad text": 2, "not JSON": 2}
    assert caplog.text.count("(too deep)") == 1  # one log line per peer and kind in ten seconds
    port.sink.received(PEER, "actions", (action % '{"hand": "left"}').encode())
    assert [a.params.params for a in actions] == [{"hand": "left"}]  # the link goes on
    await link.stop()
    await manager.stop()


def test_drop_log_lines_are_bounded_per_peer_and_kind(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    drops = Drops(logging.getLogger("test.drops"), clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger="test.drops")
    for _ in range(1000):
        drops.drop("invalid", "p1", "messages", "bad")
    drops.drop("invalid", "p2", "messages", "bad")
    now[0] = 11.0
    drops.drop("invalid", "p1", "messages", "bad")
    assert drops.counts["invalid"] == 1002
    assert len(caplog.records) == 3
    assert "999 more of this kind" in caplog.records[-1].getMessage()


async def test_a_peers_people_cannot_start_turns_faster_than_people_type() -> None:
    akari = Local("akari", importance=5, line="hello")
    _, manager, link, port, seen = await setup(akari)
    now = [0.0]
    link.rate = RateLimit(clock=lambda: now[0])
    assert port.sink is not None
    for i in range(30):  # each would interrupt the conversation and ask akari's model for a vote
        port.sink.received(PEER, "messages", raw(Message.create(from_="user", message=f"hey {i}", to=["akari"])))
    heard = [m for m in seen if isinstance(m, Message) and m.params.from_ == f"user@{PEER}"]
    assert len(heard) == PEOPLE_BURST
    assert link.drops.counts["flood"] == 30 - PEOPLE_BURST
    now[0] = 60.0  # a minute later: a burst again at most
    for i in range(30):
        port.sink.received(PEER, "messages", raw(Message.create(from_="user", message=f"again {i}", to=["akari"])))
    again = [m for m in seen if isinstance(m, Message) and m.params.message.startswith("again")]
    assert len(again) == PEOPLE_BURST  # the bucket holds at most a burst
    await link.stop()
    await manager.stop()


async def test_a_companion_elsewhere_that_lets_a_vote_pass_is_not_waited_for_until_it_votes_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A peer announcing a companion that never votes held every turn addressed to it for remote_vote_wait_s (95 s).
    monkeypatch.setattr(remote_module, "SILENT_AFTER_S", 0.5)
    bus = InProcessBus()
    seen: list[Any] = []
    Changes.event = asyncio.Event()
    bus.subscribe(("messages", "states", "events"), lambda i: (seen.append(i), Changes.event.set()), direct=True)
    akari = Local("akari", importance=5, line="akari answers")
    manager = ConversationManager(bus, user_id="user", participants=[akari], config=ConversationConfig(
        vote_deadline_s=0.2, turn_cap=1, remote_vote_wait_s=0.8))
    port = RecordingPort()
    link = NetworkLink(bus, port, local=[CompanionMetadata(id="akari", name="akari")], user_id="user", roster=manager)
    await manager.start()
    await link.start()
    assert port.sink is not None
    port.sink.announced(PEER, (SOUTA,))
    loop = asyncio.get_running_loop()

    async def turn(text: str) -> tuple[float, Any]:
        started, since = loop.time(), len(seen)
        message = Message.create(from_="user", message=text, to=["akari", "souta"])
        bus.publish(message)
        await wait_for(lambda: any(isinstance(e, ConversationChanged) and e.view.status == "ended"
                                   for e in seen[since:]))
        views = [e.view.turn for e in seen if isinstance(e, ConversationChanged) and e.view.turn is not None
                 and e.view.turn.turn_id == message.params.id]
        return loop.time() - started, views[-1].vote_of("souta")

    took, vote = await turn("first")
    assert took >= 0.8  # waited for souta's vote, as for any companion elsewhere
    assert vote is not None
    assert vote.status == "missing"
    took, vote = await turn("second")
    assert took < 0.6  # not waited for again
    assert vote is not None
    assert "not waited for until it votes" in vote.error
    # souta votes again (on the next message): it is waited for again, and its vote counts
    third = Message.create(from_="user", message="third", to=["akari", "souta"])
    port.sink.received(PEER, "states", state("souta", third.params.id, 9))
    bus.publish(third)
    await wait_for(lambda: manager.view.turn is not None and manager.view.turn.turn_id == third.params.id
                   and manager.view.turn.speaker == "souta")
    await link.stop()
    await manager.stop()
