"""Time to the first kept word: a user's message -> the first streamed piece of the line that is published unchanged
(or, with ``--voice``, the first audio of that line), against the floor, one cold completion of a companion-sized
prompt (~400 tokens in, 40 out) on the same server, measured before Madoi starts.

Cases, all in one run on one server:
- **cold**: a fresh data directory, the server started and idle, Madoi started, the user's Japanese greeting to
  everyone 5 s after ``ready`` (a person reading the window). Goal: <= 1.5x the floor.
- **second start**: Madoi stopped and started again on the same data directory (what it learned of the server kept
  there; a new process is played by forgetting everything held in memory), the same greeting 5 s after ``ready``.
- **warm**: in that second start, after the user's pause (``--pause``), a greeting and an English question naming
  one companion, each against the floor of that speaker's own line request. Goal: <= 1.0x.
Per case: the requests Madoi sent between the message and the first kept word, with their prompt tokens (goal: 2 or
fewer), and lines streamed and then withdrawn (goal: 0). With ``--runs N`` the cases repeat and the medians print.

- **cast** (``--cast``; ``--cast-only`` runs nothing else): the cost of a turn with a vote round as the cast grows.
  1, 3 and 6 companions on the one serial endpoint (the sample three, and three more made from their cards), each
  in a fresh data directory, direct turns off (every companion votes on the user's greeting; ``--cast-defaults``:
  the default settings, where a one-request-at-a-time server answers the user's greeting without a vote round),
  the greeting 5 s after the likely speaker's prompt was warmed (a turn is timed, not the start: the cold case
  times that); the ratios 3/1 and 6/1 of the time to the first kept word, against the same
  run's 1-companion case. Goal: 6/1 <= 1.5x, and no "no vote within". Each size runs twice: votes through one
  joint request per endpoint (companions/companion/joint_vote.py), and each companion's own request (as before it),
  for comparison.

By default the server is the test server behaving like llama-cpp-python at its real rates (``--profile``,
``--time-scale``); ``--real`` starts the real llama-cpp-python server with the test model (scripts/real_model.py);
``--base-url URL --model ID`` uses a server already running. ``--embedded``: Madoi runs the test model itself
(``MADOI_LLM_MODEL_FILE``, its embedded runner started with the app); the floor is then one cold completion on
llama-cpp-python's stock server (the same generic build, the same file), measured first and stopped before Madoi
starts (two llama.cpp processes on two cores would starve each other); the warm cases need that server and are left
out.

Run: ``python bench/first_word.py [--runs 3] [--real] [--voice]`` (note ``uptime`` with every figure).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import os
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
from _report import real_model_script, report

from companions.testing.openai_server import PROFILES, OpenAITestServer, text_reply
from companions.testing.openai_server.demo_director import DemoDirector
from companions.wire.protocol import Message

GREETING = "みんな、こんばんは！"
NAMED = "Souta, what do you like to do on weekends?"
FLOOR_SYSTEM = ("You are \"Akari\" (id: akari), a cheerful companion who loves the night sky. You talk with people "
                "and other companions sitting together in a circle. Speak only as yourself, in one or two short "
                "sentences, in the language of the message you answer. ") * 6  # ~400 tokens with the history
# ~40 tokens (one per CJK character):
FLOOR_ANSWER = "こんばんは！今日は空がとても澄んでいて、星がたくさん見えそうだね。みんなで屋上に行ってみない？"
READING_S = 5.0  # the user reads the window after ``ready`` before greeting
CAST_SIZES = (1, 3, 6)
# Three more companions, each made from a sample card with another id and name (the cast of six)
EXTRA_CARDS = {"mio": ("akari.yaml", "みお", "Mio"), "ren": ("hina.yaml", "れん", "Ren"),
               "yuki": ("souta.toml", "ゆき", "Yuki")}


@dataclass
class Sent:
    """One request Madoi sent (recorded in the backend: the real server tells nothing per request)."""

    at: float
    prompt_tokens: int
    max_tokens: int | None
    kind: str


@dataclass
class Watch:
    """Streamed pieces, published lines, speech and requests, with their times (time.perf_counter)."""

    streamed: list[tuple[float, str, str, str, bool]] = field(default_factory=list)  # (t, who, turn, text, done)
    votes: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # turn id -> its latest VoteViews
    lines: list[tuple[float, Message]] = field(default_factory=list)
    speaking: list[tuple[float, str]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def on_event(self, item: object) -> None:
        from companions.companion.worker import TextStreamed
        from companions.conversation.readmodel import ConversationChanged
        from companions.devices.ports import SpeakingChanged

        if isinstance(item, ConversationChanged) and item.view.turn is not None:
            self.votes[item.view.turn.turn_id] = item.view.turn.votes
        elif isinstance(item, TextStreamed):
            self.streamed.append((time.perf_counter(), item.companion_id, item.turn_id, item.text, item.done))
        elif isinstance(item, SpeakingChanged) and item.speaking:
            self.speaking.append((time.perf_counter(), item.speaker_id))
            self.arrived.set()

    def on_message(self, item: object) -> None:
        if isinstance(item, Message) and item.params.from_ != "user":
            self.lines.append((time.perf_counter(), item))
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
                                                  max_tokens=40, temperature=0)
    async for _ in stream:
        pass
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


async def line_floor(base_url: str, model: str, server: OpenAITestServer | None, companion_id: str,
                     text: str) -> float:
    """One cold completion of the companion's own line: the request Madoi's reply is (its system prompt, which says
    the language and length of a line, and the message), with nothing before it, streamed to its end (seconds). A
    different prompt is sent first, so that no prompt cache holds this one."""
    from companions.cards.card import load_cards, sample_cards_dir
    from companions.companion.composing import reply_language
    from companions.companion.prompts import system_prompt
    from companions.llm.types import ChatMessage

    await floor(base_url, model, server)  # evicts the prompt cache
    if server is not None:
        server.script(text_reply(FLOOR_ANSWER))
    cards = load_cards([sample_cards_dir()]).by_id()
    card = cards[companion_id]
    message = Message.create(from_="user", message=text)
    language = reply_language(message, "ja")
    others = [c.wire_metadata(language) for c in cards.values() if c.id != companion_id]
    chat = (ChatMessage.system(system_prompt(card, language, others)), ChatMessage.user(f"User (id: user): {text}"))
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


@dataclass
class Outcome:
    """One case: seconds to the first kept word, requests and prompt tokens before it, lines streamed and then
    withdrawn, and the line."""

    seconds: float
    requests: list[Sent]
    withdrawn: int
    speaker: str
    line: str
    filler: str | None


def kept_word(watch: Watch, message: Message, began: float, voice: bool) -> tuple[float, int, str, Message] | None:
    """(time of the first kept word, streamed lines withdrawn, speaker, the line) of the first companion line that
    answered ``message``, or None while there is none. The kept word is the first piece of the last streamed text
    of the speaker before its line, when that text is how the line begins; else the line itself (it appeared whole);
    with ``voice``, the first speech of the speaker after ``began``."""
    turn = message.params.id
    streamers = {who for _, who, t, text, _ in watch.streamed if t == turn and text}
    found = next(((t, m) for t, m in watch.lines if m.params.from_ in streamers and t >= began), None)
    if found is None:
        found = next(((t, m) for t, m in watch.lines if t >= began), None)
    if found is None:
        return None
    line_at, line = found
    who = line.params.from_
    segments: list[list[tuple[float, str]]] = [[]]
    for t, speaker, turn_id, text, done in watch.streamed:
        if speaker != who or turn_id != turn or t > line_at:
            continue
        if done:
            segments.append([])
        elif text:
            segments[-1].append((t, text))
    segments = [s for s in segments if s]
    published = "".join(line.params.message.split())
    kept_at = line_at
    withdrawn = 0
    for index, segment in enumerate(segments):
        streamed = "".join("".join(text for _, text in segment).split())
        if index == len(segments) - 1 and streamed and published.startswith(streamed):
            kept_at = segment[0][0]
        else:
            withdrawn += 1
    if voice:
        spoken = next((t for t, speaker in watch.speaking if speaker == who and t >= began), None)
        if spoken is None:
            return None
        kept_at = spoken
    return kept_at, withdrawn, who, line


async def greet(runtime: Any, watch: Watch, text: str, to: list[str] | None, *, voice: bool,
                timeout: float) -> Outcome:
    """Sends ``text`` and waits for the first kept word of its answer."""
    from companions.companion.filler import filler_reason

    began = time.perf_counter()
    sent_before = len(watch.sent)
    message = runtime.parts.conversations.send(text, to=to)
    async with asyncio.timeout(timeout):
        while (found := kept_word(watch, message, began, voice)) is None:
            watch.arrived.clear()
            await watch.arrived.wait()
    kept_at, withdrawn, speaker, line = found
    requests = [s for s in watch.sent[sent_before:] if s.at <= kept_at]
    return Outcome(kept_at - began, requests, withdrawn, speaker, line.params.message, filler_reason(line))


def show(name: str, outcome: Outcome, floor_name: str, floor_s: float) -> None:
    report(name, outcome.seconds, "s", floor_name, floor_s)
    kinds = ", ".join(f"{s.kind} ({s.prompt_tokens} prompt tokens)" for s in outcome.requests)
    filler = f" [filler: {outcome.filler}]" if outcome.filler else ""
    print(f"  {outcome.speaker}: {outcome.line!r}{filler}; {len(outcome.requests)} request(s) before the kept word: "
          f"{kinds or 'none'}; streamed and withdrawn: {outcome.withdrawn}", flush=True)


async def until_idle(runtime: Any) -> None:
    """Stops the conversation the case opened (the rest of it is not measured); the user then pauses."""
    await runtime.parts.conversation_manager.stop_conversation()


async def start_madoi(watch: Watch) -> Any:
    from app.runtime.runtime import Runtime
    from app.settings.model import load_settings
    from companions.llm.capabilities import forget_endpoints
    from companions.llm.health import model_health

    forget_endpoints()  # a new process knows nothing but its data directory
    model_health.forget()
    runtime = Runtime(load_settings())
    await runtime.start()
    runtime.bus.subscribe("events", watch.on_event, name="bench", direct=True)
    runtime.bus.subscribe("messages", watch.on_message, name="bench", direct=True)
    return runtime


def use_model(base_url: str, model: str, model_file: Path | None) -> None:
    """The companions' model for the Madoi started next: the server at ``base_url``, or ``model_file`` run by Madoi."""
    for name in ("MADOI_LLM_BASE_URL", "MADOI_LLM_MODEL", "MADOI_LLM_MODEL_FILE"):
        os.environ.pop(name, None)
    if model_file is not None:
        os.environ["MADOI_LLM_MODEL_FILE"] = str(model_file)
    else:
        os.environ.update({"MADOI_LLM_BASE_URL": base_url, "MADOI_LLM_MODEL": model})


async def one_run(options: argparse.Namespace, base_url: str, model: str, server: OpenAITestServer | None,  # noqa: PLR0917
                  results: dict[str, list[tuple[float, float, int, int]]], model_file: Path | None = None,
                  embedded_floor_s: float | None = None) -> None:
    """The cold greeting, the second start's greeting and the warm cases, each reported against its floor."""
    floor_s = embedded_floor_s if embedded_floor_s is not None else await floor(base_url, model, server)
    report("floor", floor_s, "s")
    home = tempfile.mkdtemp(prefix="madoi-first-word-")
    os.environ.update({"MADOI_HOME": home, "MADOI_LANGUAGE": "ja", "MADOI_VOICE_ENABLED": str(options.voice).lower(),
                       "MADOI_VOICE_OUTPUT_DIR": str(Path(home) / "speech"), "MADOI_BRIDGE_PORT": "0",
                       "MADOI_CAMERA": "none", "MADOI_LLM_AUTODETECT_LOCAL": "false",
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    use_model(base_url, model, model_file)
    watch = Watch()
    _RECORDING[:] = [watch]
    for case in ("cold", "second_start"):
        runtime = await start_madoi(watch)
        try:
            await asyncio.sleep(READING_S)
            outcome = await greet(runtime, watch, GREETING, None, voice=options.voice, timeout=options.timeout)
            show(f"first_kept_word_{case}", outcome, "floor", floor_s)
            results[case].append((outcome.seconds / floor_s, outcome.seconds, len(outcome.requests),
                                  sum(s.prompt_tokens for s in outcome.requests)))
            await until_idle(runtime)
            if case == "second_start" and model_file is None:
                await warm_cases(runtime, watch, options, base_url, model, server, results)
        finally:
            await runtime.stop()


async def warm_cases(runtime: Any, watch: Watch, options: argparse.Namespace, base_url: str, model: str,  # noqa: PLR0917
                     server: OpenAITestServer | None, results: dict[str, list[tuple[float, float, int, int]]]) -> None:
    for case, text, to, speaker in (("warm_greeting", GREETING, None, "akari"), ("warm_named", NAMED, None, "souta")):
        floor_s = await line_floor(base_url, model, server, speaker, text)
        await asyncio.sleep(options.pause)  # the user types; the idle app warms the likely speaker meanwhile
        outcome = await greet(runtime, watch, text, to, voice=options.voice, timeout=options.timeout)
        show(f"first_kept_word_{case}", outcome, "floor_line", floor_s)
        results[case].append((outcome.seconds / floor_s, outcome.seconds, len(outcome.requests),
                              sum(s.prompt_tokens for s in outcome.requests)))
        await until_idle(runtime)


def write_extra_cards(cards_dir: Path) -> None:
    """The three companions beyond the sample cast (:data:`EXTRA_CARDS`), as user cards."""
    from companions.cards.card import sample_cards_dir

    cards_dir.mkdir(parents=True, exist_ok=True)
    for card_id, (source, ja, en) in EXTRA_CARDS.items():
        text = (sample_cards_dir() / source).read_text(encoding="utf-8")
        text = re.sub(r"^(\s*id\s*[:=]\s*)\"?\w+\"?", rf'\g<1>"{card_id}"', text, count=1, flags=re.MULTILINE)
        name = f"{{ja = \"{ja}\", en = \"{en}\"}}" if source.endswith(".toml") else f"{{ja: {ja}, en: {en}}}"
        text = re.sub(r"^(\s*name\s*[:=]\s*)\{.*\}", r"\g<1>" + name, text, count=1, flags=re.MULTILINE)
        (cards_dir / f"{card_id}{Path(source).suffix}").write_text(text, encoding="utf-8")


@contextlib.contextmanager
def conversation_config(**changes: Any) -> Iterator[None]:
    """Madoi's conversation configuration with ``changes`` while inside."""
    import companions.conversation.manager as manager_module
    from companions.conversation import config as config_module

    original = config_module.config_from_settings

    def configured(settings: Any) -> Any:
        return dataclasses.replace(original(settings), **changes)

    config_module.config_from_settings = configured
    manager_module.config_from_settings = configured  # type: ignore[attr-defined]
    try:
        yield
    finally:
        config_module.config_from_settings = original
        manager_module.config_from_settings = original  # type: ignore[attr-defined]


@dataclass
class CastOutcome:
    """One cast case: the time to the first kept word, the vote requests before it, and how the votes ended."""

    seconds: float
    vote_requests: int
    votes: int
    late: int  # "no vote within"


async def cast_case(options: argparse.Namespace, base_url: str, model: str, size: int, *, joint: bool,
                    model_file: Path | None = None) -> CastOutcome:
    """``size`` companions on the endpoint, every one voting on the user's greeting (see the module's docstring)."""
    from app.settings.paths import Paths
    from companions.companion.participant import CompanionParticipant, seat

    home = tempfile.mkdtemp(prefix=f"madoi-first-word-cast{size}-")
    os.environ.update({"MADOI_HOME": home, "MADOI_LANGUAGE": "ja", "MADOI_VOICE_ENABLED": "false",
                       "MADOI_BRIDGE_PORT": "0", "MADOI_CAMERA": "none", "MADOI_LLM_AUTODETECT_LOCAL": "false",
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    use_model(base_url, model, model_file)
    if size > 3:
        write_extra_cards(Paths.resolve().cards_dir)
    watch = Watch()
    _RECORDING[:] = [watch]
    CompanionParticipant.joins_ballots = joint
    try:
        with conversation_config(**({} if options.cast_defaults else {"direct_turns": False})):
            runtime = await start_madoi(watch)
        try:
            cast = runtime.parts.cast.companions
            for companion_id in list(cast)[size:]:
                seat(runtime.parts.conversation_manager, cast[companion_id], False)
            assert len(runtime.parts.conversation_manager.present) == size, runtime.parts.conversation_manager.present
            warmed = await until_warmed(runtime.parts.conversation_manager)
            await asyncio.sleep(READING_S)
            message_count = len(watch.votes)
            outcome = await greet(runtime, watch, GREETING, None, voice=False, timeout=options.timeout)
            await until_idle(runtime)
        finally:
            await runtime.stop()
    finally:
        CompanionParticipant.joins_ballots = True
    first_turn = list(watch.votes.values())[message_count] if len(watch.votes) > message_count else ()
    requests = [s for s in outcome.requests if s.kind in ("vote", "joint_vote")]
    late = sum(1 for v in first_turn if "no vote within" in v.error)
    began = outcome.requests[0].at if outcome.requests else 0.0
    sent = ", ".join(f"{s.kind} (+{s.at - began:.1f} s, {s.prompt_tokens} prompt tokens)" for s in outcome.requests)
    print(f"  {size} companion(s), {'joint' if joint else 'separate'} votes ({warmed}): {outcome.seconds:.2f} s "
          f"to the first "
          f"kept word of {outcome.speaker}; {len(requests)} vote request(s) before it; requests: {sent}; votes "
          f"{[(v.companion, v.status, v.state, v.importance) for v in first_turn]}; no vote within: {late}",
          flush=True)
    return CastOutcome(outcome.seconds, len(requests), len(first_turn), late)


async def until_warmed(manager: Any, timeout_s: float = 120.0) -> str:
    """Waits until the likely speaker's prompt was warmed (the server idle after start-up: an embedded runner has
    loaded its model), so that a cast case times the turn, not the start (measured on Madoi's own runner: a greeting
    5 s after ``ready`` met the model still loading, or the warm-up still evaluating, in some runs and not others:
    2.4-12.4 s for the same one-request line)."""
    began = time.perf_counter()
    while manager.warm_ups < 1:
        if time.perf_counter() - began > timeout_s:
            return f"not warmed within {timeout_s:.0f} s"
        await asyncio.sleep(0.2)
    return f"warmed after {time.perf_counter() - began:.1f} s"


async def cast_cases(options: argparse.Namespace, base_url: str, model: str,
                     results: dict[str, list[CastOutcome]], *, model_file: Path | None = None,
                     server: OpenAITestServer | None = None) -> None:
    """The cast cases of one run: every size with joint votes, then with separate ones (unless ``--cast-joint-only``);
    the ratios to one. On the test server each case's conversation is scripted afresh: the same greeting would
    otherwise go on with the previous case's conversation, and a longer first sentence would be timed, not the
    cast."""
    for joint in (True,) if options.cast_joint_only else (True, False):
        for size in CAST_SIZES:
            if server is not None:
                server.fallback = DemoDirector()
            results[f"{'joint' if joint else 'separate'}_{size}"].append(
                await cast_case(options, base_url, model, size, joint=joint, model_file=model_file))
        label = "joint" if joint else "separate"
        one = results[f"{label}_1"][-1].seconds
        for size in CAST_SIZES[1:]:
            report(f"cast_{label}_{size}_to_1", results[f"{label}_{size}"][-1].seconds, "s", f"cast_{label}_1", one)


async def early_speech_compare(options: argparse.Namespace, base_url: str, model: str) -> None:
    """Voice on: the greeting's first audio with early speech (checked sentences said as they pass) against the
    whole line said once it is complete, alternately in fresh data directories, ``options.runs`` times each."""
    from companions.conversation import config as conversation_config

    original = conversation_config.config_from_settings
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(options.runs):
        for early in (True, False):
            def configured(settings: Any, early: bool = early) -> Any:
                import dataclasses

                return dataclasses.replace(original(settings), early_speech=early)

            conversation_config.config_from_settings = configured  # type: ignore[assignment]
            import companions.conversation.manager as manager_module

            manager_module.config_from_settings = configured  # type: ignore[attr-defined]
            home = tempfile.mkdtemp(prefix="madoi-first-word-voice-")
            os.environ.update({"MADOI_HOME": home, "MADOI_VOICE_ENABLED": "true",
                               "MADOI_VOICE_OUTPUT_DIR": str(Path(home) / "speech")})
            watch = Watch()
            _RECORDING[:] = [watch]
            runtime = await start_madoi(watch)
            try:
                await asyncio.sleep(READING_S)
                outcome = await greet(runtime, watch, GREETING, None, voice=True, timeout=options.timeout)
                seconds[early].append(outcome.seconds)
                label = "checked sentences (early speech)" if early else "whole lines"
                print(f"  first audio, {label}: {outcome.seconds:.2f} s; {outcome.speaker}: {outcome.line!r}",
                      flush=True)
                await until_idle(runtime)
            finally:
                await runtime.stop()
    conversation_config.config_from_settings = original  # type: ignore[assignment]
    import companions.conversation.manager as manager_module

    manager_module.config_from_settings = original  # type: ignore[attr-defined]
    whole = statistics.median(seconds[False])
    report("first_audio_checked_sentences", statistics.median(seconds[True]), "s", "whole_lines", whole)


async def run(options: argparse.Namespace) -> None:

    server: OpenAITestServer | None = None
    real = None
    base_url, model = options.base_url, options.model
    model_file: Path | None = None
    embedded_floor_s: float | None = None
    if options.embedded:  # the floor on the stock server, stopped before Madoi runs the same file itself
        script = real_model_script()
        stock = script.start_server(Path(tempfile.mkdtemp(prefix="madoi-first-word-server-")))
        try:
            embedded_floor_s = await floor(stock.base_url, stock.model, None)
        finally:
            stock.stop()
        model_file = script.paths().model
    elif options.real:
        real = real_model_script().start_server(Path(tempfile.mkdtemp(prefix="madoi-first-word-server-")))
        base_url, model = real.base_url, real.model
    elif base_url is None:
        profile = PROFILES[options.profile].scaled(options.time_scale)
        server = OpenAITestServer(models=[model], fallback=DemoDirector(), profile=profile)
        await server.start()
        base_url = server.base_url
    watch_all: dict[str, list[tuple[float, float, int, int]]] = {
        "cold": [], "second_start": [], "warm_greeting": [], "warm_named": []}
    cast_all: dict[str, list[CastOutcome]] = collections.defaultdict(list)
    record_requests_once()
    where = ("Madoi's own runner (real model)" if model_file else "real llama-cpp-python" if real
             else options.profile if server else base_url)
    print(f"-- server: {where}; "
          f"voice {'on' if options.voice else 'off'}; load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        if options.early_speech_compare:
            os.environ.update({"MADOI_LANGUAGE": "ja", "MADOI_LLM_BASE_URL": base_url, "MADOI_LLM_MODEL": model,
                               "MADOI_BRIDGE_PORT": "0", "MADOI_CAMERA": "none",
                               "MADOI_LLM_AUTODETECT_LOCAL": "false",
                               "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
            await early_speech_compare(options, base_url, model)
            return
        for run_index in range(options.runs):
            print(f"-- run {run_index + 1} of {options.runs}", flush=True)
            if not options.cast_only:
                await one_run(options, base_url, model, server, watch_all, model_file, embedded_floor_s)
            if options.cast or options.cast_only:
                await cast_cases(options, base_url, model, cast_all, model_file=model_file, server=server)
    finally:
        if server is not None:
            await server.stop()
        if real is not None:
            real.stop()
    print(f"-- medians over {options.runs} run(s); load average now {os.getloadavg()[0]:.2f}", flush=True)
    for case, values in watch_all.items():
        if values:
            ratios = [v[0] for v in values]
            print(f"{case}: median {statistics.median(ratios):.2f}x the floor (runs: "
                  f"{', '.join(f'{r:.2f}x' for r in ratios)}); median {statistics.median(v[1] for v in values):.2f} s;"
                  f" requests before the kept word {[v[2] for v in values]}, prompt tokens {[v[3] for v in values]}",
                  flush=True)
    show_cast(cast_all)


def show_cast(results: dict[str, list[CastOutcome]]) -> None:
    """The cast cases' medians: each size's time to the first kept word and its ratio to one companion's."""
    for label in ("joint", "separate"):
        if not results.get(f"{label}_1"):
            continue
        one = statistics.median(o.seconds for o in results[f"{label}_1"])
        for size in CAST_SIZES:
            outcomes = results[f"{label}_{size}"]
            seconds = statistics.median(o.seconds for o in outcomes)
            print(f"cast {label} {size}: median {seconds:.2f} s, {seconds / one:.2f}x one companion; vote requests "
                  f"before the kept word {[o.vote_requests for o in outcomes]}, votes {[o.votes for o in outcomes]},"
                  f" no vote within {[o.late for o in outcomes]}", flush=True)


_RECORDING: list[Watch] = []


def record_requests_once() -> None:
    """Every Madoi started in this run records its requests into the watch of the case under way."""
    from companions.llm.openai_backend import OpenAIChatModel

    if getattr(OpenAIChatModel.stream, "_bench", False):
        return
    from companions.llm.capabilities import estimate_tokens

    original = OpenAIChatModel.stream

    def stream(self: OpenAIChatModel, request: Any) -> AsyncIterator[Any]:
        for watch in _RECORDING:
            kind = ("warm-up" if request.max_tokens == 1 and -200 < request.priority < 0 else
                    "learning" if request.priority <= -200 else
                    request.response_format.name if request.response_format is not None else
                    "events-after-line" if request.priority < 0 else "line")
            watch.sent.append(Sent(time.perf_counter(), sum(estimate_tokens(m.text) for m in request.messages),
                                   request.max_tokens, kind))
        return original(self, request)

    stream._bench = True  # type: ignore[attr-defined]
    OpenAIChatModel.stream = stream  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="llama-cpp-python")
    parser.add_argument("--time-scale", type=float, default=1.0, help="the profile's delays x this (1: real rates)")
    parser.add_argument("--real", action="store_true", help="start the real llama-cpp-python server (test model)")
    parser.add_argument("--embedded", action="store_true",
                        help="Madoi runs the test model itself (MADOI_LLM_MODEL_FILE); the floor on the stock server")
    parser.add_argument("--base-url", default=None, help="a server already running instead of the test one")
    parser.add_argument("--model", default="demo-model")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--voice", action="store_true", help="to the first audio of the line (speech to files)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for a line")
    parser.add_argument("--early-speech-compare", action="store_true",
                        help="voice on: first audio with checked sentences said early against whole lines")
    parser.add_argument("--pause", type=float, default=3.0, help="the user's pause before each warm message (s)")
    parser.add_argument("--cast", action="store_true", help="also the cast cases: 1, 3 and 6 companions voting")
    parser.add_argument("--cast-only", action="store_true", help="only the cast cases")
    parser.add_argument("--cast-joint-only", action="store_true", help="the cast cases without separate votes")
    parser.add_argument("--cast-defaults", action="store_true",
                        help="the cast cases with the default conversation settings (direct turns on)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
