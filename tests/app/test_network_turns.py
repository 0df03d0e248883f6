"""Two Madoi nodes on the real network (the py-libp2p adapter, each in its own thread, on loopback), one process:
they take the same turns when their deadlines differ, and a peer that vanishes mid-turn counts as a missing vote
on the other node at once (companions/conversation/vote_round.py: a vote is judged where it is cast)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
from companions.bus import InProcessBus
from companions.conversation import (
    ConversationChanged,
    ConversationConfig,
    ConversationManager,
)
from companions.network.link import NetworkLink
from companions.protocol import CompanionMetadata, Message
from tests.app.test_network_interop import subscribed
from tests.companions.network_doubles import Companion
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


@dataclass
class Node:
    bus: InProcessBus
    manager: ConversationManager
    link: NetworkLink
    network: Libp2pNetwork
    seen: list[Any]
    changed: asyncio.Event

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
        # on what this node's bus carried, and every 50 ms: the roster changes on the libp2p thread's callbacks
        await wait_until(predicate, timeout=timeout, changed=self.changed, every=0.05)

    def lines(self) -> list[tuple[str, str]]:
        return [(m.params.from_, m.params.message) for m in self.seen if isinstance(m, Message)]

    def first_speaker(self) -> str | None:
        turns = [e.view.turn for e in self.seen if isinstance(e, ConversationChanged) and e.view.turn is not None
                 and e.view.turn.number == 1 and e.view.turn.speaker is not None]
        return turns[0].speaker if turns else None

    async def stop(self) -> None:
        await self.link.stop()
        await self.manager.stop()


async def start_node(companion: Companion, deadline_s: float) -> Node:
    bus = InProcessBus()
    seen: list[Any] = []
    changed = asyncio.Event()

    def record(item: Any) -> None:
        seen.append(item)
        changed.set()

    bus.subscribe(("messages", "states", "events"), record, direct=True)
    manager = ConversationManager(bus, user_id="user", participants=[companion],
                                  config=ConversationConfig(vote_deadline_s=deadline_s, turn_cap=1))
    network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", mdns=False))
    link = NetworkLink(bus, network, local=[CompanionMetadata(id=companion.id, name=companion.id)], user_id="user",
                       roster=manager)
    await manager.start()
    await link.start()
    return Node(bus, manager, link, network, seen, changed)


async def joined(a: Node, b: Node, a_has: str, b_has: str) -> None:
    a.network.dial(b.link.status.addresses[0])
    await a.wait_for(lambda: b_has in a.manager.present)
    await b.wait_for(lambda: a_has in b.manager.present)
    await subscribed(a.network, b.link.status.peer_id)
    await subscribed(b.network, a.link.status.peer_id)


async def test_two_nodes_with_different_deadlines_take_the_same_turn() -> None:
    # akari's node has a long deadline (its model is slow) and akari votes after 0.8 s; souta's node would have
    # given up on her vote after 0.3 s. It waits for the State akari's node publishes instead.
    akari, souta = Companion("akari", importance=9, vote_s=0.8), Companion("souta", importance=5)
    a = await start_node(akari, deadline_s=5.0)
    b = await start_node(souta, deadline_s=0.3)
    try:
        await joined(a, b, "akari", "souta")
        b.bus.publish(Message.create(from_="user", message="what shall we do?"))
        await a.wait_for(lambda: a.manager.view.status == "ended")
        await b.wait_for(lambda: b.manager.view.status == "ended")
        assert a.first_speaker() == b.first_speaker() == "akari"
        assert b.lines() == [("user", "what shall we do?"), ("akari", "akari answers")]
        # on akari's machine, the user of souta's machine (the same message: turns are keyed by its id)
        assert a.lines() == [(f"user@{b.link.status.peer_id}", "what shall we do?"), ("akari", "akari answers")]
        assert [m.params.id for m in a.seen if isinstance(m, Message)] == \
            [m.params.id for m in b.seen if isinstance(m, Message)]
        assert souta.composed == []
    finally:
        await a.stop()
        await b.stop()


async def test_a_peer_that_vanishes_mid_turn_counts_as_a_missing_vote_at_once() -> None:
    akari, souta = Companion("akari", importance=9, vote_s=60.0), Companion("souta", importance=5)
    a = await start_node(akari, deadline_s=90.0)
    b = await start_node(souta, deadline_s=0.3)
    try:
        await joined(a, b, "akari", "souta")
        b.bus.publish(Message.create(from_="user", message="are you there?"))
        await asyncio.wait_for(akari.voting.wait(), 20)
        started = asyncio.get_running_loop().time()
        await a.link.stop()  # akari's machine leaves while her vote is awaited
        await b.wait_for(lambda: b.manager.view.status == "ended")
        assert asyncio.get_running_loop().time() - started < 10  # not the wait for a remote vote (95 s)
        assert b.first_speaker() == "souta"
        turns = [e.view.turn for e in b.seen if isinstance(e, ConversationChanged) and e.view.turn is not None
                 and e.view.turn.number == 1]
        gone = turns[-1].vote_of("akari")
        assert gone is not None
        assert gone.status == "missing"
    finally:
        await a.manager.stop()
        await b.stop()
