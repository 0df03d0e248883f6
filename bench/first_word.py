"""Time to the first word: a user's message -> the first streamed word of the companion chosen to answer (voice off),
against the floor, one cold completion of a companion-sized prompt (~400 tokens in, ~40 out) on the same server.

Figures, all measured in one run on the same server:
- ``first_word_<profile>_<case>: X s (Y x floor)`` for a Japanese greeting to everyone and an English question
  naming one companion, with the three sample companions and default settings (issue 13: <= 1.5x).
- per turn: requests and prompt tokens, with the share of the server's busy time taken by votes, card events and
  the reply, and Madoi's own share (wall time of the turn with no request in flight).

By default the server is the test server behaving like llama-cpp-python at its real rates (``--profile``,
``--time-scale``); ``--base-url URL --model ID`` runs the same against a real server (first-word figures only:
the request breakdown needs the test server's records).

Run: ``python bench/first_word.py [--profile llama-cpp-python] [--base-url http://127.0.0.1:8000/v1 --model m]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import openai
from _report import report

from companions.protocol import Message
from companions.testing.openai_server import PROFILES, OpenAITestServer, RecordedRequest, text_reply
from companions.testing.openai_server.demo_director import DemoDirector, request_kind

CASES = {"greeting": ("みんな、こんばんは！", None), "named": ("Souta, what do you like to do on weekends?", None)}
FLOOR_SYSTEM = ("You are \"Akari\" (id: akari), a cheerful companion who loves the night sky. You talk with people "
                "and other companions sitting together in a circle. Speak only as yourself, in one or two short "
                "sentences, in the language of the message you answer. ") * 6  # ~400 tokens with the history
# ~40 tokens (one per CJK character):
FLOOR_ANSWER = "こんばんは！今日は空がとても澄んでいて、星がたくさん見えそうだね。みんなで屋上に行ってみない？"


@dataclass
class Watch:
    """Streamed pieces and lines seen on the bus, with their times."""

    streamed: list[tuple[float, str, str]] = field(default_factory=list)  # (time, companion, turn id)
    lines: list[tuple[float, str, str]] = field(default_factory=list)  # (time, companion, text)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def on_event(self, item: object) -> None:
        from companions.worker import TextStreamed

        if isinstance(item, TextStreamed) and item.text.strip():
            self.streamed.append((time.perf_counter(), item.companion_id, item.turn_id))

    def on_message(self, item: object) -> None:
        from companions.protocol import Message

        if isinstance(item, Message) and item.params.from_ not in ("user",):
            self.lines.append((time.perf_counter(), item.params.from_, item.params.message))
            self.arrived.set()


async def floor(base_url: str, model: str, server: OpenAITestServer | None) -> float:
    """One cold completion of a companion-sized prompt, streamed to its end (seconds)."""
    if server is not None:
        server.script(text_reply(FLOOR_ANSWER))
    client = openai.AsyncOpenAI(base_url=base_url, api_key=os.environ.get("MADOI_LLM_API_KEY", "x"), max_retries=0)
    nonce = uuid.uuid4().hex  # first: no prompt cache can hold this prefix
    messages = [{"role": "system", "content": f"[{nonce}] {FLOOR_SYSTEM}"},
                {"role": "user", "content": "ユーザー (id: user): みんな、こんばんは！"}]
    started = time.perf_counter()
    stream = await client.chat.completions.create(model=model, messages=messages, stream=True,  # type: ignore[arg-type]
                                                  max_tokens=40)
    async for _ in stream:
        pass
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


async def line_floor(base_url: str, model: str, server: OpenAITestServer | None, companion_id: str,
                     text: str) -> float:
    """One cold completion of the companion's own line: the request Madoi's reply is (its system prompt, the
    message, the turn's instructions), with nothing before it, streamed to its end (seconds). A different prompt is
    sent first, so that no prompt cache holds this one."""
    from companions.cards import load_cards, localized, sample_cards_dir
    from companions.composing import LineRules, reply_language, turn_notes
    from companions.llm.system_messages import with_one_system_message
    from companions.llm.types import ChatMessage
    from companions.prompts import guidance_prompt, system_prompt

    await floor(base_url, model, server)  # evicts the prompt cache
    if server is not None:
        server.script(text_reply(FLOOR_ANSWER))
    cards = load_cards([sample_cards_dir()]).by_id()
    card = cards[companion_id]
    others = [c.wire_metadata("ja") for c in cards.values() if c.id != companion_id]
    message = Message.create(from_="user", message=text)
    language = reply_language(message, "ja")
    rules = LineRules.from_samples({lang: localized(card.metadata.sample, lang) for lang in ("ja", "en")})
    notes = turn_notes(language, rules.limit(language))
    chat = with_one_system_message((ChatMessage.system(system_prompt(card, "ja", others)),
                                    ChatMessage.user(f"ユーザー (id: user): {text}"),
                                    ChatMessage.system(guidance_prompt(notes, "ja"))))
    client = openai.AsyncOpenAI(base_url=base_url, api_key=os.environ.get("MADOI_LLM_API_KEY", "x"), max_retries=0)
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model=model, messages=[{"role": m.role, "content": m.text} for m in chat],  # type: ignore[misc]
        stream=True, max_tokens=256)
    async for _ in stream:
        pass
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


async def idle(server: OpenAITestServer | None, timeout: float = 120.0) -> None:
    """Waits until the server has no request in flight (the previous turn's leftovers done)."""
    if server is None:
        await asyncio.sleep(5.0)
        return
    async with asyncio.timeout(timeout):
        while any(r.timing.finished is None for r in server.chat_requests()):  # noqa: ASYNC110 - a benchmark polls
            await asyncio.sleep(0.05)


def kind_of(request: RecordedRequest) -> str:
    """vote, event_params, turn, after-tool (demo_director.request_kind), or warm-up (a one-token request)."""
    return "warm-up" if request.body.get("max_tokens") == 1 else request_kind(request.body)


def breakdown(records: list[RecordedRequest], began: float, ended: float) -> dict[str, float]:
    """Busy seconds per kind within [began, ended] (monotonic), and Madoi's own (no request in flight)."""
    busy: dict[str, float] = {}
    spans: list[tuple[float, float]] = []
    for r in records:
        start, end = r.arrived, r.timing.finished if r.timing.finished is not None else ended
        start, end = max(start, began), min(end, ended)
        if end <= start:
            continue
        kind = kind_of(r)
        kind = "reply" if kind in ("turn", "after-tool") else "events" if kind == "event_params" else kind
        served = (r.timing.finished or ended) - (r.timing.started or r.arrived)
        busy[kind] = busy.get(kind, 0.0) + max(0.0, min(served, end - start))
        spans.append((start, end))
    covered, last = 0.0, began
    for start, end in sorted(spans):
        fresh = max(start, last)
        if end > fresh:
            covered += end - fresh
            last = end
    busy["madoi"] = max(0.0, (ended - began) - covered)
    return busy


async def run(options: argparse.Namespace) -> None:
    server: OpenAITestServer | None = None
    if options.base_url is None:
        profile = PROFILES[options.profile].scaled(options.time_scale)
        server = OpenAITestServer(models=[options.model], fallback=DemoDirector(), profile=profile)
        await server.start()
    base_url = options.base_url or (server.base_url if server else "")
    # A Japanese user's app (the sample companions' own language; the named question is asked in English).
    os.environ.update({"MADOI_LANGUAGE": "ja", "MADOI_LLM_BASE_URL": base_url, "MADOI_LLM_MODEL": options.model,
                       "MADOI_VOICE_ENABLED": "false", "MADOI_BRIDGE_PORT": "0", "MADOI_CAMERA": "none",
                       "MADOI_LLM_AUTODETECT_LOCAL": "false",
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    from app.runtime import Runtime
    from app.settings import load_settings

    name = options.profile if server is not None else "server"
    floor_s = await floor(base_url, options.model, server)
    report(f"floor_{name}", floor_s, "s")
    # The floor the issue names: one completion of one companion's line on the same server (the speaker's own
    # reply request, cold). The 400-token prompt above is kept for comparison with earlier runs.
    speakers = {"greeting": "akari", "named": "souta"}
    line_floors = {case: await line_floor(base_url, options.model, server, speakers[case], text)
                   for case, (text, _) in CASES.items()}
    for case, seconds in line_floors.items():
        report(f"floor_line_{name}_{case}", seconds, "s")
    try:
        # With prompt warming (the default) and without it, each in a fresh home: the user's pause before each
        # message is the idle time the app may use (warming.py).
        for warm in (True, False):
            os.environ["MADOI_HOME"] = tempfile.mkdtemp(prefix="madoi-first-word-")
            os.environ["MADOI_CONVERSATION_WARM_PROMPTS"] = str(warm).lower()
            suffix = "" if warm else "_unwarmed"
            print(f"-- prompt warming {'on (the default)' if warm else 'off'}; the user pauses {options.pause:g} s "
                  "before each message", flush=True)
            runtime = Runtime(load_settings())
            await runtime.start()
            try:
                await cases(runtime, server, options, name=name + suffix, line_floors=line_floors, floor_s=floor_s)
            finally:
                await runtime.stop()
    finally:
        if server is not None:
            await server.stop()


async def cases(runtime: Any, server: OpenAITestServer | None, options: argparse.Namespace, *, name: str,
                line_floors: dict[str, float], floor_s: float) -> None:
    """The greeting and the named question, each after the user's pause; the figures and the request breakdown."""
    watch = Watch()
    runtime.bus.subscribe("events", watch.on_event, name="bench")
    runtime.bus.subscribe("messages", watch.on_message, name="bench")
    for case, (text, to) in CASES.items():
        await idle(server)
        await asyncio.sleep(options.pause)
        watch.lines.clear()
        watch.arrived.clear()
        began_mono, began = time.monotonic(), time.perf_counter()
        seen = len(server.chat_requests()) if server else 0
        message = runtime.parts.conversations.send(text, to=to)
        def answered(message: Message = message) -> tuple[float, str, str] | None:
            """The first line of a companion that streamed for this message (a line still coming from
            the previous conversation is not an answer)."""
            turn = {who for _, who, t in watch.streamed if t == message.params.id}
            return next((line for line in watch.lines if line[1] in turn), None)

        async with asyncio.timeout(options.timeout):
            while answered() is None:
                await watch.arrived.wait()
                watch.arrived.clear()
        found = answered()
        assert found is not None
        line_at, speaker, line = found
        words = [t for t, who, turn in watch.streamed if who == speaker and turn == message.params.id]
        first = min(words) - began
        report(f"first_word_{name}_{case}", first, "s", "floor_line", line_floors[case])
        print(f"  ({first / floor_s:.2f}x vs the 400-token floor {floor_s:.3g} s)")
        print(f"  {speaker}: {line}")
        if runtime.parts.conversation is not None:
            await runtime.parts.conversation.stop_conversation()
        if server is not None:
            ended_mono = began_mono + (line_at - began)
            turn = [r for r in server.chat_requests()[seen:] if r.arrived <= ended_mono]
            tokens = sum(r.timing.prompt_tokens for r in turn)
            cached = sum(r.timing.cached_tokens for r in turn)
            shares = breakdown(turn, began_mono, ended_mono)
            total = ended_mono - began_mono
            kinds = ", ".join(f"{k} {v / total:.0%}" for k, v in sorted(shares.items()))
            print(f"  requests: {len(turn)} ({sum(r.timing.interrupted for r in turn)} cut off, "
                  f"{sum(r.timing.status != 200 for r in turn)} refused); prompt tokens {tokens} "
                  f"({cached} from the prompt cache); share of the turn: {kinds}", flush=True)
            for r in turn:
                t = r.timing
                served = (t.finished or ended_mono) - (t.started or r.arrived)
                print(f"    {kind_of(r):12s} HTTP {t.status} prompt {t.prompt_tokens} "
                      f"(cached {t.cached_tokens}), generated {t.completion_tokens}, served {served:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="llama-cpp-python")
    parser.add_argument("--time-scale", type=float, default=1.0, help="the profile's delays x this (1: real rates)")
    parser.add_argument("--base-url", default=None, help="a real OpenAI-compatible server instead of the test one")
    parser.add_argument("--model", default="demo-model")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for a line")
    parser.add_argument("--pause", type=float, default=3.0, help="the user's pause before each message (seconds)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
