"""Madoi's own nodes on the real network in one process (the py-libp2p adapter, each in its own thread, on
loopback): a conversation manager and its network link per node, joined to each other."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
from companions.bus import InProcessBus
from companions.conversation import (
    ConversationChanged,
    ConversationConfig,
    ConversationManager,
)
from companions.network.link import NetworkLink
from companions.protocol import CompanionMetadata, Message
from tests.companions.network_doubles import Companion
from tests.waiting import wait_until


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


async def subscribed(network: Libp2pNetwork, peer: str) -> None:
    """Waits until Madoi's node knows ``peer`` subscribed to messages and states (a publish then reaches it)."""
    async with asyncio.timeout(20):
        # gossipsub says nothing when a peer's subscription arrives: its state is read until it does
        for topic in ("messages", "states"):
            while peer not in await network.topic_peers(topic):  # noqa: ASYNC110
                await asyncio.sleep(0.05)
