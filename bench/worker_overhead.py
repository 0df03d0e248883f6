"""Worker overhead per turn (model time excluded) and the concurrency of parallel tools.

1. Overhead: a zero-latency scripted model answers each turn with one tool call and then a text. The baseline is the
   bare consumption of the same two streams (no worker); the worker's figure is a whole turn (hooks, validation,
   tool dispatch, bus events). Printed as p50 and p99 per turn, in wall time and in this thread's CPU time: on a
   shared, loaded machine the wall-clock p99 is dominated by the OS descheduling the process (spikes of a few ms
   that appear with or without the bus and the GC), which CPU time leaves out.
2. Concurrency: one turn with N=4 tools that each sleep 50 ms, against a turn with one such tool. Target <= 1.2.
"""

from __future__ import annotations

import asyncio
import time

from _report import report

from companions.common.loop_health import percentile
from companions.companion.hooks import WorkerHook
from companions.companion.worker import Worker
from companions.llm.scripted import ScriptedModel, call, calls, say
from companions.llm.types import ChatMessage, ChatRequest
from companions.tools.functions import ToolRegistry, tool
from companions.wire.bus import InProcessBus

TURNS = 2000
CONTEXT = [ChatMessage.system("You are a benchmark."), ChatMessage.user("hello")]


@tool
async def note(text: str) -> str:
    """Returns the text."""
    return text


@tool
async def nap(label: str) -> str:
    """Sleeps 50 ms."""
    await asyncio.sleep(0.05)
    return label


def script(turns: int) -> ScriptedModel:
    model = ScriptedModel("bench")
    for i in range(turns):
        model.add(call("note", {"text": f"n{i}"}, id=f"c{i}"), say("done", chunks=["do", "ne"]))
    return model


async def overhead() -> None:
    bus = InProcessBus()
    bus.subscribe("events", lambda _e: None, name="ui", maxsize=100_000)
    bare: list[float] = []
    bare_cpu: list[float] = []
    model = script(TURNS)
    request = ChatRequest(messages=tuple(CONTEXT))
    for _ in range(TURNS):
        start, cpu = time.perf_counter(), time.thread_time()
        for _step in range(2):
            async for _event in model.stream(request):
                pass
        bare.append(time.perf_counter() - start)
        bare_cpu.append(time.thread_time() - cpu)
    model.assert_used_up()

    model = script(TURNS)
    worker = Worker(model, ToolRegistry([note]), hooks=[WorkerHook(), WorkerHook()], bus=bus, owner="bench")
    turns: list[float] = []
    turns_cpu: list[float] = []
    for _ in range(TURNS):
        start, cpu = time.perf_counter(), time.thread_time()
        await worker.run(CONTEXT)
        turns.append(time.perf_counter() - start)
        turns_cpu.append(time.thread_time() - cpu)
    model.assert_used_up()
    await bus.drain(5)
    await bus.aclose()
    for q in (0.50, 0.99):
        report(f"worker turn (1 tool call + answer) p{round(q * 100)}", percentile(turns, q) * 1e6, "us",
               f"bare stream consumption p{round(q * 100)}", percentile(bare, q) * 1e6)
        report(f"worker overhead per turn p{round(q * 100)}", (percentile(turns, q) - percentile(bare, q)) * 1e6, "us")
    for q in (0.50, 0.99):
        report(f"worker turn CPU time p{round(q * 100)}", percentile(turns_cpu, q) * 1e6, "us",
               f"bare stream consumption CPU time p{round(q * 100)}", percentile(bare_cpu, q) * 1e6)


async def concurrency(n: int = 4, repeats: int = 5) -> None:
    async def one_turn(k: int) -> float:
        model = ScriptedModel("bench")
        step = calls(*(("nap", {"label": str(i)}) for i in range(k))) if k > 1 else call("nap", {"label": "0"})
        model.add(step, say("ok"))
        start = time.perf_counter()
        await Worker(model, ToolRegistry([nap])).run(CONTEXT)
        model.assert_used_up()
        return time.perf_counter() - start

    single = min([await one_turn(1) for _ in range(repeats)])
    parallel = min([await one_turn(n) for _ in range(repeats)])
    report(f"turn with {n} parallel 50 ms tools", parallel * 1e3, "ms", "turn with 1 such tool", single * 1e3)


async def main() -> None:
    await overhead()
    await concurrency()


if __name__ == "__main__":
    asyncio.run(main())
