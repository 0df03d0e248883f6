"""Conversation control overhead: time per turn with zero-latency participants, and parallel vote phase.

Figures (each against a baseline measured in the same run):
1. ``turn overhead p50/p99``: wall time between consecutive companion messages when every participant answers
   instantly (3 voters per turn), i.e. what the framework itself costs per turn (votes, deadline bookkeeping,
   selection, read-model events, States on the bus, pacing). Baseline: a hand-rolled turn doing the bare minimum
   (gather the votes, take the max, publish the message on the same bus and wait for its delivery). The CPU time
   per turn is printed too (the process's thread time between consecutive messages, p50/p99): wall p99 on a shared
   machine is mostly the OS descheduling the process, which CPU time does not count.
2. ``vote phase, 4 voters``: from the turn opening to the speaker starting to compose, with 4 voters that each
   take 50 ms. Baseline: the same with one voter. A ratio near 1.0 means votes really run in parallel
   (target <= 1.1).

Run: ``python bench/conversation_overhead.py``
"""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
import string
import time
from dataclasses import dataclass, field

from _report import report

from companions.common.loop_health import percentile
from companions.conversation import (
    ComposedLine,
    ConversationConfig,
    ConversationManager,
    ConversationReadModel,
    Participant,
    TurnContext,
    Vote,
)
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Closing, Message

TURNS = 400
VOTE_LATENCY_S = 0.05
VOTE_TURNS = 15


def fresh_text(rng: random.Random) -> str:
    """Unrelated words every time, so the repetition detector never closes the benchmark conversation."""
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(8))


@dataclass(eq=False)
class Instant(Participant):
    id: str
    rng: random.Random
    vote_latency_s: float = 0.0
    importance: int = 5
    vote_started: dict[str, float] = field(default_factory=dict)  # turn id -> when this voter was asked
    composed: dict[str, float] = field(default_factory=dict)  # turn id -> when this speaker started composing

    async def vote(self, turn: TurnContext) -> Vote:
        self.vote_started[turn.turn_id] = time.perf_counter()
        if self.vote_latency_s:
            await asyncio.sleep(self.vote_latency_s)  # the simulated model latency under test
        return Vote(state="speak", importance=self.importance)

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        self.composed[turn.turn_id] = time.perf_counter()
        return ComposedLine(text=fresh_text(self.rng))


@dataclass
class Arrivals:
    """When each companion message arrived: wall time, and the thread's CPU time (the process's own work)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def record(self, message: Message) -> None:
        if message.params.from_ != "user":
            self.wall.append(time.perf_counter())
            self.cpu.append(time.thread_time())


async def run_conversation(participants: list[Instant], turns: int, deadline_s: float,
                           arrivals: Arrivals | None = None) -> list[float]:
    """Runs one conversation to its turn cap; returns the arrival time of every companion message (``arrivals``
    gets their CPU times too)."""
    bus = InProcessBus()
    kept = arrivals if arrivals is not None else Arrivals()

    bus.subscribe("messages", kept.record)
    read = ConversationReadModel()
    read.attach(bus)
    manager = ConversationManager(bus, config=ConversationConfig(vote_deadline_s=deadline_s, turn_cap=turns),
                                  participants=participants)
    await manager.start()
    bus.publish(Message.create(from_="user", message="go"))
    view = await read.wait_for(lambda v: v.status == "ended", timeout=600)
    assert view.ended_reason == "turn-cap", view
    await manager.stop()
    await bus.aclose()
    return kept.wall


async def baseline_turns(turns: int, voters: int) -> list[float]:
    """The minimal hand-rolled turn loop on the same bus: gather votes, take the max, publish, await delivery."""
    bus = InProcessBus()
    rng = random.Random(1)
    delivered = asyncio.Event()
    arrivals: list[float] = []

    def on_message(message: Message) -> None:
        arrivals.append(time.perf_counter())
        delivered.set()

    bus.subscribe("messages", on_message)

    async def vote(i: int) -> tuple[int, str]:
        return (5, f"c{i}")

    for _ in range(turns):
        votes = await asyncio.gather(*(vote(i) for i in range(voters)))
        speaker = max(votes)[1]
        delivered.clear()
        bus.publish(Message.create(from_=speaker, message=fresh_text(rng), to=[]))
        await delivered.wait()
    await bus.aclose()
    return arrivals


def intervals_ms(arrivals: list[float]) -> list[float]:
    return [(b - a) * 1000.0 for a, b in itertools.pairwise(arrivals)]


async def vote_phase_ms(voters: int) -> float:
    """Median time from a turn's first vote call to its speaker composing, with ``voters`` 50 ms voters."""
    rng = random.Random(2)
    people = [Instant(f"c{i}", rng, vote_latency_s=VOTE_LATENCY_S) for i in range(voters + 1)]
    await run_conversation(people, VOTE_TURNS, deadline_s=2.0)
    phases = []
    for speaker in people:
        for turn_id, composed in speaker.composed.items():
            first_vote = min(p.vote_started[turn_id] for p in people if turn_id in p.vote_started)
            phases.append((composed - first_vote) * 1000.0)
    assert len(phases) == VOTE_TURNS
    return statistics.median(phases)


async def main() -> None:
    rng = random.Random(0)
    await run_conversation([Instant(f"c{i}", rng) for i in range(4)], 50, deadline_s=1.0)  # warm-up
    cpu0 = time.process_time()
    base = intervals_ms(await baseline_turns(TURNS, voters=3))
    cpu1 = time.process_time()
    arrivals = Arrivals()
    conv = intervals_ms(await run_conversation([Instant(f"c{i}", rng) for i in range(4)], TURNS, deadline_s=1.0,
                                               arrivals=arrivals))
    cpu2 = time.process_time()
    report("turn overhead p50 (3 instant voters)", percentile(conv, 0.5), "ms",
           "hand-rolled turn p50", percentile(base, 0.5))
    report("turn overhead p99 (3 instant voters)", percentile(conv, 0.99), "ms",
           "hand-rolled turn p99", percentile(base, 0.99))
    # CPU time is immune to the OS descheduling the process, which dominates wall p99 on a shared machine.
    report("turn CPU time mean (3 instant voters)", (cpu2 - cpu1) * 1000.0 / TURNS, "ms",
           "hand-rolled turn CPU mean", (cpu1 - cpu0) * 1000.0 / TURNS)
    report("turn CPU time p99 (3 instant voters)", percentile(intervals_ms(arrivals.cpu), 0.99), "ms")
    one = await vote_phase_ms(1)
    four = await vote_phase_ms(4)
    report("vote phase, 4 voters x 50 ms", four, "ms", "1 voter x 50 ms", one)


if __name__ == "__main__":
    asyncio.run(main())
