"""The trust checks cost the user no time: bench/first_word.py's cases (the cold greeting, the second start's, the
warm greeting and the named question; time to the first kept word against the floor, one cold completion on the same
server) with the checks on and off, alternating in one run on one server.

"Off" is the app without them, patched here and never in the app: no turn origin kept down the chain
(``ConversationManager._origin_of`` answers the message's own ``from``), no tool gate (``Worker._refusal`` lets
every call run), no device rule (``QueryBroker._permitted`` allows every query) and no provenance (a prompt holds no
untrusted words, ``Companion._held_words``, and nothing private, ``Companion._private_words``: no line is held at
the doors). Each case prints the median of
its ratios to the floor, checks on and off, and on/off.

``--micro`` measures the checks themselves, without a model server: whole worker turns of a zero-latency scripted
model that calls a tool needing the camera and then answers (the tool gate's work in a turn), checks on against off
alternating in one run; per turn, the CPU time of this thread (p50, p99), for a turn of the user's (the origin is
trusted: one comparison) and a turn of a guest the user allowed always (a remembered decision looked up). On a
loaded machine this is the figure to trust: first_word's times then move by seconds from run to run.

Run: ``python bench/trust_checks.py [--runs 2] [--micro]`` (note ``uptime`` with every figure; first_word's options
apply).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
from collections.abc import Iterator
from typing import Any

import first_word  # bench/first_word.py: the cases and their measurement
from _report import report

from companions.testing.openai_server import PROFILES, OpenAITestServer
from companions.testing.openai_server.demo_director import DemoDirector

Results = dict[str, list[tuple[float, float, int, int]]]


@contextlib.contextmanager
def checks_off() -> Iterator[None]:
    """The app as it was before these checks: every origin is the message's sender, every tool runs, every
    query is answered."""
    from companions.companion.companion import Companion
    from companions.companion.worker import Worker
    from companions.conversation.manager import ConversationManager
    from companions.trust.policy import Capability, Permission, Relation, Source
    from companions.wire.query_broker import QueryBroker

    async def no_refusal(self: Worker, *_: Any, **__: Any) -> None:
        return None

    def nothing_held(self: Companion, *_: Any) -> tuple[Source, ...]:
        return ()

    def nothing_private(self: Companion, *_: Any) -> frozenset[Capability]:
        return frozenset()

    async def allowed(self: QueryBroker, query: Any) -> Permission:
        return Permission(True, "", Source(query.params.from_, Relation.OWN), Capability.CAMERA)

    def own_sender(self: ConversationManager, message: Any, chain: str | None) -> str:
        return str(message.params.from_)

    saved = (Worker._refusal, QueryBroker._permitted, ConversationManager._origin_of, Companion._held_words,
             Companion._private_words)
    Worker._refusal = no_refusal  # type: ignore[method-assign,assignment]
    QueryBroker._permitted = allowed  # type: ignore[method-assign,assignment]
    ConversationManager._origin_of = own_sender  # type: ignore[method-assign]
    Companion._held_words = nothing_held  # type: ignore[method-assign]
    Companion._private_words = nothing_private  # type: ignore[method-assign]
    try:
        yield
    finally:
        (Worker._refusal, QueryBroker._permitted, ConversationManager._origin_of, Companion._held_words,  # type: ignore[method-assign]
         Companion._private_words) = saved  # type: ignore[method-assign]


async def micro(turns: int) -> None:
    """The gate's own cost per worker turn, checks on against off (see the module's docstring)."""
    from companions.common.loop_health import percentile
    from companions.companion.worker import RunContext, Worker
    from companions.llm.scripted import ScriptedModel, call, say
    from companions.llm.types import ChatMessage
    from companions.tools.functions import ToolRegistry, tool
    from companions.trust.policy import Capability, Relation, Source, TrustDecision, TrustPolicy

    @tool(needs=[Capability.CAMERA])
    async def look() -> str:
        """Looks."""
        return "a cat"

    guest = Source("kumo", Relation.GUEST, "Kumo", "bridge")
    policy = TrustPolicy(decisions=[TrustDecision(source=guest.key, capability=Capability.CAMERA, decision="always")])
    context = [ChatMessage.system("You are a benchmark."), ChatMessage.user("look")]

    async def turns_cpu(origin: Source) -> list[float]:
        model = ScriptedModel("bench")
        worker = Worker(model, ToolRegistry([look]), trust=policy)
        spent = []
        for _ in range(turns):
            model.add(call("look", {}), say("a cat"))
            began = time.thread_time()
            await worker.run(context, ctx=RunContext(origin=origin))
            spent.append(time.thread_time() - began)
        return spent

    print(f"-- micro: {turns} turns per set; load average {os.getloadavg()[0]:.2f}", flush=True)
    for name, origin in (("user", Source("user", Relation.USER)), ("guest_allowed", guest)):
        on: list[float] = []
        off: list[float] = []
        for index in range(6):  # alternating sets: neither always goes first
            if index % 2 == 0:
                on += await turns_cpu(origin)
            else:
                with checks_off():
                    off += await turns_cpu(origin)
        for q in (50, 99):
            report(f"turn_cpu_{name}_checks_on_p{q}", percentile(on, q / 100) * 1e6, "us",
                   f"checks_off_p{q}", percentile(off, q / 100) * 1e6)
    print(f"-- load average now {os.getloadavg()[0]:.2f}", flush=True)


def _empty() -> Results:
    return {"cold": [], "second_start": [], "warm_greeting": [], "warm_named": []}


async def run(options: argparse.Namespace) -> None:
    profile = PROFILES[options.profile].scaled(options.time_scale)
    server = OpenAITestServer(models=[options.model], fallback=DemoDirector(), profile=profile)
    await server.start()
    first_word.record_requests_once()
    results = {True: _empty(), False: _empty()}
    print(f"-- server: {options.profile}; load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        for index in range(options.runs):
            order = (True, False) if index % 2 == 0 else (False, True)  # neither always goes first
            for on in order:
                print(f"-- run {index + 1} of {options.runs}, checks {'on' if on else 'off'}", flush=True)
                with contextlib.nullcontext() if on else checks_off():
                    await first_word.one_run(options, server.base_url, options.model, server, results[on])
    finally:
        await server.stop()
    print(f"-- medians over {options.runs} run(s) each; load average now {os.getloadavg()[0]:.2f}", flush=True)
    for case in results[True]:
        on = statistics.median(r[0] for r in results[True][case])
        off = statistics.median(r[0] for r in results[False][case])
        report(f"{case}_checks_on_to_floor", on, "x", f"{case}_checks_off_to_floor", off)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="llama-cpp-python")
    parser.add_argument("--time-scale", type=float, default=1.0, help="the profile's delays x this (1: real rates)")
    parser.add_argument("--model", default="demo-model")
    parser.add_argument("--runs", type=int, default=2, help="runs of each (on and off alternate which goes first)")
    parser.add_argument("--voice", action="store_true", help="to the first audio of the line (speech to files)")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--pause", type=float, default=3.0)
    parser.add_argument("--micro", action="store_true", help="the checks' own cost per worker turn (no server)")
    parser.add_argument("--turns", type=int, default=2000, help="turns per set with --micro")
    options = parser.parse_args()
    asyncio.run(micro(options.turns) if options.micro else run(options))


if __name__ == "__main__":
    main()
