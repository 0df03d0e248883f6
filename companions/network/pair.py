"""Two nodes in one process: an in-memory :class:`~companions.network.port.NetworkPort` pair, for tests and benchmarks.

What one end publishes reaches the other end's sink on a later loop iteration, signed by this end's peer id, with no
transport in between: everything else of the network (the wire's JSON, the checks, the remote participants, each
node's turn-taking) runs as it does on a real network. A delay per payload plays a slow or lossy network.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from companions.network.port import NetworkSink, NetworkStatus
from companions.wire.protocol import CompanionMetadata

Delay = Callable[[str, bytes], float]
"""Seconds before a payload (topic, bytes) reaches the other end."""


class PairPort:
    """One end of a port pair; :func:`port_pair` makes two that reach each other."""

    def __init__(self, peer: str, delay: Delay | None = None) -> None:
        self.peer = peer
        self.delay = delay
        self.other: PairPort | None = None
        self.sink: NetworkSink | None = None

    async def start(self, sink: NetworkSink, local: tuple[CompanionMetadata, ...]) -> NetworkStatus:
        self.sink = sink
        return self.status()

    def publish(self, topic: str, payload: bytes) -> None:
        other = self.other
        if other is None or other.sink is None:
            return
        loop = asyncio.get_running_loop()
        delay = self.delay(topic, payload) if self.delay is not None else 0.0
        if delay > 0:
            loop.call_later(delay, other.sink.received, self.peer, topic, payload)
        else:
            loop.call_soon(other.sink.received, self.peer, topic, payload)

    def announce(self, local: tuple[CompanionMetadata, ...]) -> None:
        return None  # a pair carries no metadata (not at start either): the nodes learn each other from their votes

    def status(self) -> NetworkStatus:
        return NetworkStatus(running=self.sink is not None, peer_id=self.peer)

    async def stop(self) -> None:
        self.sink = None


def port_pair(a: str, b: str, *, a_to_b: Delay | None = None, b_to_a: Delay | None = None) -> tuple[PairPort, PairPort]:
    """Two ends, for the peers ``a`` and ``b``; ``a_to_b`` delays what ``a`` publishes, ``b_to_a`` the reverse."""
    first, second = PairPort(a, a_to_b), PairPort(b, b_to_a)
    first.other, second.other = second, first
    return first, second
