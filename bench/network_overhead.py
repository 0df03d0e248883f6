"""Framework overhead per turn in a conversation of 3 local and 3 remote companions.

Two nodes (each a bus, a ConversationManager and a NetworkLink) run in one process; their links are joined by a
port pair that hands each payload to the other node on the next loop iteration (no transport: the wire's JSON,
the schema checks, the from check, the remote participants and the turn-taking on both nodes are all that is
measured). Every participant answers at once (bench/conversation_overhead.py's ``Instant``), so the time between
two consecutive lines on node A is what the framework costs per turn, both nodes included. Baseline: the same
conversation of 6 companions all local on one node (conversation_overhead's figure), in the same run.

Run: ``.venv/bin/python bench/network_overhead.py [turns]``
"""

from __future__ import annotations

import asyncio
import random
import sys
import time

from _report import report
from conversation_overhead import Instant, intervals_ms, run_conversation

from companions.bus import InProcessBus
from companions.conversation import ConversationConfig, ConversationManager, ConversationReadModel
from companions.loop_health import percentile
from companions.network.link import NetworkLink
from companions.network.peers import RateLimit
from companions.network.port import NetworkSink, NetworkStatus
from companions.protocol import CompanionMetadata, Message


class PairPort:
    """One end of an in-memory port pair: what one node publishes, the other receives (next loop iteration)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.other: PairPort | None = None
        self.sink: NetworkSink | None = None

    async def start(self, sink: NetworkSink, local: tuple[CompanionMetadata, ...]) -> NetworkStatus:
        self.sink = sink
        return self.status()

    def publish(self, topic: str, payload: bytes) -> None:
        other = self.other
        if other is not None and other.sink is not None:
            asyncio.get_running_loop().call_soon(other.sink.received, self.name, topic, payload)

    def status(self) -> NetworkStatus:
        return NetworkStatus(running=True, peer_id=self.name)

    async def stop(self) -> None:
        self.sink = None


async def networked(turns: int, rng: random.Random) -> list[float]:
    """Lines' arrival times on node A for a conversation of A's 3 and B's 3 companions."""
    ports = PairPort("peer-a"), PairPort("peer-b")
    ports[0].other, ports[1].other = ports[1], ports[0]
    nodes = []
    arrivals: list[float] = []
    for n, port in enumerate(ports):
        bus = InProcessBus()
        people = [Instant(f"{'ab'[n]}{i}", rng) for i in range(3)]
        manager = ConversationManager(bus, config=ConversationConfig(vote_deadline_s=1.0, turn_cap=turns),
                                      participants=people)
        # Instant companions take hundreds of turns a second: the flood limit (50 items/s per peer) is lifted.
        link = NetworkLink(bus, port, local=[CompanionMetadata(id=p.id, name=p.id) for p in people],
                           user_id="user", roster=manager, rate=RateLimit(rate_per_s=1e9, burst=10**9))
        await manager.start()
        await link.start()
        nodes.append((bus, manager, link, people))
    for (_, _, link, _), (_, _, _, people), peer in ((nodes[0], nodes[1], "peer-b"), (nodes[1], nodes[0], "peer-a")):
        link.announced(peer, tuple(CompanionMetadata(id=p.id, name=p.id) for p in people))
    bus_a = nodes[0][0]

    def on_message(message: Message) -> None:
        if message.params.from_ != "user":
            arrivals.append(time.perf_counter())

    bus_a.subscribe("messages", on_message, direct=True)
    read = ConversationReadModel()
    read.attach(bus_a)
    bus_a.publish(Message.create(from_="user", message="go"))
    view = await read.wait_for(lambda v: v.status == "ended", timeout=600)
    assert view.ended_reason == "turn-cap", view
    for _, manager, link, _ in nodes:
        await link.stop()
        await manager.stop()
    return arrivals


async def main(turns: int) -> None:
    rng = random.Random(0)
    await networked(30, rng)  # warm-up
    local = intervals_ms(await run_conversation([Instant(f"c{i}", rng) for i in range(6)], turns, deadline_s=1.0))
    cpu = time.process_time()
    remote = intervals_ms(await networked(turns, rng))
    cpu = (time.process_time() - cpu) * 1000.0 / turns
    report("turn overhead p50, 3 local + 3 remote (both nodes)", percentile(remote, 0.5), "ms",
           "6 local companions p50", percentile(local, 0.5))
    report("turn overhead p99, 3 local + 3 remote (both nodes)", percentile(remote, 0.99), "ms",
           "6 local companions p99", percentile(local, 0.99))
    report("turn CPU time mean, 3 local + 3 remote (both nodes)", cpu, "ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 400))
