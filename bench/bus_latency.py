"""Bus publish -> deliver latency (p50/p99) and throughput, against a bare asyncio.Queue hand-off in the same run.

Target: bus p99 within 3x of the bare hand-off.
"""

from __future__ import annotations

import asyncio
import time

import _report  # noqa: F401 - puts the repo on sys.path
from _report import report

from companions.common.loop_health import percentile
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message

N = 20_000
ROUNDS = 3


async def bare_queue_latency(items: list[Message]) -> list[float]:
    queue: asyncio.Queue[tuple[float, Message]] = asyncio.Queue()
    lat: list[float] = []
    done = asyncio.Event()

    async def consumer() -> None:
        while len(lat) < len(items):
            sent, _ = await queue.get()
            lat.append(time.perf_counter() - sent)
        done.set()

    task = asyncio.create_task(consumer())
    for item in items:
        queue.put_nowait((time.perf_counter(), item))
        await asyncio.sleep(0)  # one hand-off at a time: latency, not queueing
    await done.wait()
    await task
    return lat


async def bus_latency(items: list[Message]) -> list[float]:
    bus = InProcessBus()
    lat: list[float] = []
    sent_at: dict[str, float] = {}
    done = asyncio.Event()

    def handler(item: Message) -> None:
        lat.append(time.perf_counter() - sent_at[item.params.id])
        if len(lat) == len(items):
            done.set()

    bus.subscribe("messages", handler)
    for item in items:
        sent_at[item.params.id] = time.perf_counter()
        bus.publish(item)
        await asyncio.sleep(0)
    await done.wait()
    await bus.aclose()
    return lat


async def bus_throughput(items: list[Message]) -> float:
    bus = InProcessBus()
    count = 0
    done = asyncio.Event()

    def handler(item: Message) -> None:
        nonlocal count
        count += 1
        if count == len(items):
            done.set()

    bus.subscribe("messages", handler, maxsize=len(items))
    started = time.perf_counter()
    for item in items:
        bus.publish(item)
    await done.wait()
    elapsed = time.perf_counter() - started
    await bus.aclose()
    return len(items) / elapsed


async def queue_throughput(items: list[Message]) -> float:
    queue: asyncio.Queue[Message] = asyncio.Queue()
    started = time.perf_counter()
    for item in items:
        queue.put_nowait(item)
    for _ in items:
        await queue.get()
    return len(items) / (time.perf_counter() - started)


async def main() -> None:
    items = [Message.create(from_="user", message=f"m{i}") for i in range(N)]
    bare: list[float] = []
    bus: list[float] = []
    for _ in range(ROUNDS):  # interleaved so machine noise hits both alike
        bare += await bare_queue_latency(items)
        bus += await bus_latency(items)
    us = 1e6
    report("bus_deliver_p50", percentile(bus, 0.5) * us, "us", "asyncio.Queue_handoff_p50", percentile(bare, 0.5) * us)
    report("bus_deliver_p99", percentile(bus, 0.99) * us, "us", "asyncio.Queue_handoff_p99",
           percentile(bare, 0.99) * us)
    report("bus_throughput", await bus_throughput(items), "items/s", "asyncio.Queue_throughput",
           await queue_throughput(items))


if __name__ == "__main__":
    asyncio.run(main())
