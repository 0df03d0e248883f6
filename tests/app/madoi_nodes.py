"""Madoi's own nodes on the real network in one process: tests/companions/network_doubles.py's node (a conversation
manager and its network link) on the py-libp2p adapter, each in its own thread, on loopback, joined to each other."""

from __future__ import annotations

import asyncio

from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
from tests.companions import network_doubles
from tests.companions.network_doubles import Companion, Node


async def start_node(companion: Companion, deadline_s: float) -> Node[Libp2pNetwork]:
    """A node with ``companion`` on a libp2p network of its own (loopback, no mDNS). Its waits take up to 20 s and
    look every 50 ms besides: the roster changes on the libp2p thread's callbacks."""
    network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", mdns=False))
    return await network_doubles.start_node(network, [companion], deadline_s=deadline_s, patience=20.0, every=0.05)


async def joined(a: Node[Libp2pNetwork], b: Node[Libp2pNetwork], a_has: str, b_has: str) -> None:
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
