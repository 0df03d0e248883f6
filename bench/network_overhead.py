"""Framework overhead per turn in a conversation of 3 local and 3 remote companions.

Two nodes (each a bus, a ConversationManager and a NetworkLink) run in one process; their links are joined by a
port pair that hands each payload to the other node on the next loop iteration (no transport: the wire's JSON,
the schema checks, the from check, the remote participants and the turn-taking on both nodes are all that is
measured). Every participant answers at once (bench/conversation_overhead.py's ``Instant``), so the time between
two consecutive lines on node A is what the framework costs per turn, both nodes included. Baseline: the same
conversation of 6 companions all local on one node (conversation_overhead's figure), in the same run.
Both as wall time and as CPU time (the thread's time between the lines): on a shared machine the wall p99 is mostly
the OS giving the two cores to other processes for a few milliseconds, which CPU time does not count. Each figure is
printed for every one of ``runs`` runs (the load average before each), then the median run.

Run: ``.venv/bin/python bench/network_overhead.py [turns] [runs]``
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys

from _report import report
from conversation_overhead import Arrivals, Instant, intervals_ms, run_conversation

from companions.common.loop_health import percentile
from companions.conversation import ConversationConfig, ConversationManager, ConversationReadModel
from companions.network.link import NetworkLink
from companions.network.pair import port_pair
from companions.network.peers import RateLimit
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message


async def networked(turns: int, rng: random.Random, arrivals: Arrivals | None = None) -> list[float]:
    """Lines' arrival times on node A for a conversation of A's 3 and B's 3 companions (``arrivals`` gets their
    CPU times too)."""
    ports = port_pair("peer-a", "peer-b")
    nodes = []
    kept = arrivals if arrivals is not None else Arrivals()
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
    bus_a.subscribe("messages", kept.record, direct=True)
    read = ConversationReadModel()
    read.attach(bus_a)
    bus_a.publish(Message.create(from_="user", message="go"))
    view = await read.wait_for(lambda v: v.status == "ended", timeout=600)
    assert view.ended_reason == "turn-cap", view
    for _, manager, link, _ in nodes:
        await link.stop()
        await manager.stop()
    read.close()
    return kept.wall


async def main(turns: int, runs: int) -> None:
    rng = random.Random(0)
    await networked(30, rng)  # warm-up
    figures: dict[str, list[tuple[float, float]]] = {}
    for run in range(runs):
        load = os.getloadavg()[0]
        local, remote = Arrivals(), Arrivals()
        await run_conversation([Instant(f"c{i}", rng) for i in range(6)], turns, deadline_s=1.0, arrivals=local)
        await networked(turns, rng, remote)
        print(f"run {run + 1} (load average {load:.1f}):", flush=True)
        for kind, a, b in (("wall", remote.wall, local.wall), ("CPU", remote.cpu, local.cpu)):
            for q in (0.5, 0.99):
                name = f"turn {kind} p{round(q * 100)}, 3 local + 3 remote (both nodes)"
                pair = percentile(intervals_ms(a), q), percentile(intervals_ms(b), q)
                figures.setdefault(name, []).append(pair)
                report("  " + name, pair[0], "ms", f"6 local companions {kind} p{round(q * 100)}", pair[1])
    print(f"median of {runs} runs:", flush=True)
    for name, pairs in figures.items():
        value = statistics.median(p[0] for p in pairs)
        report("  " + name, value, "ms", "6 local companions", statistics.median(p[1] for p in pairs))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 400, int(sys.argv[2]) if len(sys.argv) > 2 else 5))
