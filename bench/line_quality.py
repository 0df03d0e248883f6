"""Lines worth hearing from a small model: over N companion lines on a real server, with voice on (audio to files),
what a user hears and then sees replaced, what a user should never see, and how many lines are the companion's own.

Madoi runs with default settings (the runtime the window uses) in front of the real llama-cpp-python server with the
test model (scripts/real_model.py starts it), or any server given with ``--base-url``. User messages in Japanese and
English, to everyone and naming one companion, open conversations that run until they end. Figures:
- ``heard_then_withdrawn``: lines of which something was voiced (early speech: ``speak`` queries with the line's
  ``messageId``) that is not how the published line goes, or that was never published. Goal 0.
- ``bad_lines``: lines with JSON or tool syntax, a speaker's name as a prefix, the wrong language, a
  self-introduction as another companion, an assistant's words, or parroting the message answered. Goal 0.
- ``own_lines``: the share of lines that are the companion's own (not a stock filler: ``metadata.filler``,
  companions/companion/filler.py), with the fillers' reasons; ``sample_lines``: how many of those are the card's own
  sample line standing in (composing.compose_line), the rest are the model's.
- ``prompt_text``: lines with a sentence that is mostly the prompt's instructions (lines.Instructions), or a piece of
  the companion's system prompt read out (composing.strip_prompt_copies: its persona), or an entry of the recall
  block (lines.reads_like_recalled_entry), or the prompt's headings, the vote's scores or the personality field in
  the model's words (lines.not_spoken). Goal 0.
- ``repeated_own``: own lines that repeat an earlier line of the same companion in the run (lines.is_repeat). Goal 0.
- Measured without the app's own checks (``prompt_text`` reuses them, so it cannot see what they miss):
  ``prompt_overlap``, lines that share a run of characters with the companion's prompt texts (its system prompt, the
  vote's and a turn's instructions: at least 8 characters of Japanese or 24 of English, not in the message answered
  and not its card's sample line); ``said_back``, lines of 12 characters or more, not a greeting alone, that are
  another companion's earlier line of the run again (difflib ratio >= 0.8). Goal 0.
With ``--without shorter,samples`` a step before the stock filler is left out (the retry's shorter prompt, the
card's sample line), to measure what each step gives.
With ``--baseline-prompts REV`` the same number of lines is first measured with the prompt texts of git revision
``REV`` (resources/prompts at that revision), then with the working tree's, in the same run on the same server.

``--embedded``: Madoi runs the test model with its own runner (``MADOI_LLM_MODEL_FILE``), as after the first-run
card's "Talk now"; the first message waits until the runner answers.

Run: ``python bench/line_quality.py [--lines 30] [--without STEPS] [--baseline-prompts REV]
[--base-url URL --model ID | --embedded]``
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import difflib
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _report import REPO, real_model_script, report

from companions.wire.protocol import Message, Query

PROMPTS: tuple[tuple[str, list[str] | None, str], ...] = (
    ("みなさん、こんにちは！", None, "ja"),
    ("Hello everyone, how are you today?", None, "en"),
    ("あかり、好きな星座は何？", ["akari"], "ja"),
    ("Souta, what do you like about old maps?", ["souta"], "en"),
    ("週末は何をして過ごすのが好き？", None, "ja"),
    ("Hina, can you recommend a tea for a cold evening?", ["hina"], "en"),
)


@dataclass
class Said:
    """One published companion line and what was voiced of it."""

    speaker: str
    text: str
    answered: str
    language: str
    filler: str | None
    line_id: str  # the early-speech id of the composition: <id of the message answered>:<speaker>


@dataclass
class Record:
    lines: list[Said] = field(default_factory=list)
    voiced: dict[str, list[str]] = field(default_factory=lambda: collections.defaultdict(list))
    last_message: Message | None = None
    language: str = "ja"
    cards: dict[str, Any] = field(default_factory=dict)  # speaker id -> CompanionCard


def _plain(text: str) -> str:
    return "".join(text.split())




def use_prompts_of(revision: str | None) -> None:
    """The prompt texts of git ``revision`` (None: the working tree's) for every companion from now on."""
    from companions.companion import prompts

    if revision is None:
        directory = REPO / "resources" / "prompts"
    else:
        directory = Path(tempfile.mkdtemp(prefix="madoi-prompts-"))
        for lang in prompts.LANGUAGES:
            text = subprocess.run(["git", "show", f"{revision}:resources/prompts/{lang}.toml"], cwd=REPO,
                                  capture_output=True, text=True, check=True).stdout
            (directory / f"{lang}.toml").write_text(text, encoding="utf-8")
    prompts.prompts_dir = lambda: directory  # type: ignore[assignment]
    prompts.prompt_texts.cache_clear()


async def measure(options: argparse.Namespace, label: str) -> Record:
    """Runs Madoi until ``options.lines`` companion lines were published; returns what was said and voiced."""
    from app.runtime.runtime import Runtime
    from app.settings.model import load_settings
    from companions.companion.filler import filler_reason
    from companions.conversation.readmodel import ConversationChanged
    from companions.llm.capabilities import forget_endpoints

    home = tempfile.mkdtemp(prefix="madoi-line-quality-")
    os.environ.update({"MADOI_HOME": home, "MADOI_VOICE_ENABLED": str(not options.no_voice).lower(),
                       "MADOI_VOICE_OUTPUT_DIR": str(Path(home) / "speech")})
    forget_endpoints()
    runtime = Runtime(load_settings())
    await runtime.start()
    record = Record()
    ended = asyncio.Event()
    companions = set(runtime.parts.cast.companions)
    record.cards = {key: companion.card for key, companion in runtime.parts.cast.companions.items()}

    def on_item(item: object) -> None:
        if isinstance(item, Message):
            sender = item.params.from_
            before = record.last_message
            if sender in companions and before is not None:
                record.lines.append(Said(sender, item.params.message, before.params.message, record.language,
                                         filler_reason(item), f"{before.params.id}:{sender}"))
            record.last_message = item
        elif isinstance(item, Query) and item.params.type == "speak":
            body = item.params.body or {}
            line_id = body.get("messageId")
            if isinstance(line_id, str):
                record.voiced[line_id].append(str(body.get("message", "")))
        elif isinstance(item, ConversationChanged) and item.change == "ended":
            ended.set()

    runtime.bus.subscribe(["messages", "queries", "events"], on_item, name="line-quality", direct=True)
    if options.embedded:  # the lines, not the model's load: until the runner answered the first warm-up
        manager = runtime.parts.conversation_manager
        for _ in range(900):  # at most 3 minutes
            if manager.warm_ups >= 1:
                break
            await asyncio.sleep(0.2)
    started = time.perf_counter()
    try:
        index = 0
        while len(record.lines) < options.lines:
            text, to, record.language = PROMPTS[index % len(PROMPTS)]
            index += 1
            ended.clear()
            runtime.parts.conversations.send(text, to=to)
            try:
                async with asyncio.timeout(options.per_conversation):
                    await ended.wait()
            except TimeoutError:
                await runtime.parts.conversation_manager.stop_conversation()
    finally:
        if options.embedded:
            print(f"  [{label}] the runner's memory: {runner_memory()}", flush=True)
        await runtime.stop()
    print(f"  [{label}] {len(record.lines)} lines in {time.perf_counter() - started:.0f} s; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    return record


def runner_memory() -> str:
    """The model runner's resident memory now and at its peak (Linux: /proc/<pid>/status), with the companions'
    prompts it keeps after the run's requests."""
    import psutil

    for child in psutil.Process().children(recursive=True):
        if any("app.llm.runner.child" in part or "--model-runner-child" in part for part in child.cmdline()):
            status = Path(f"/proc/{child.pid}/status").read_text()
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            return f"RSS {fields['VmRSS'].strip()}, peak {fields['VmHWM'].strip()}"
    return "no runner process found"


@dataclass
class Verdict:
    withdrawn: int = 0
    bad: int = 0
    own: int = 0
    samples: int = 0
    prompt_text: int = 0
    repeated_own: int = 0
    prompt_overlap: int = 0
    said_back: int = 0
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)


def judge(record: Record, n: int, label: str, verbose: bool) -> Verdict:
    """Prints the lines and returns what was found."""
    from companions.cards.card import localized
    from companions.companion.composing import instructions_for, sample_lines, strip_prompt_copies
    from companions.companion.lines import (
        is_repeat,
        misidentified,
        not_spoken,
        only_a_greeting,
        reads_like_recalled_entry,
        sentences_of,
        sounds_like_an_assistant,
    )
    from companions.companion.prompts import system_prompt
    from tests.realmodel.test_real_conversation import NAMES, Line, problems_with

    lines = record.lines[:n]
    published = {said.line_id for said in record.lines}
    everyone: list[tuple[str, str]] = []  # (speaker, line) of the run so far
    verdict = Verdict()
    reasons = verdict.reasons
    withdrawn = bad = own = 0
    earlier: dict[str, list[str]] = collections.defaultdict(list)
    for said in lines:
        card = record.cards.get(said.speaker)
        samples = set(sample_lines(localized(card.metadata.sample, said.language))) if card is not None else set()
        sample = said.filler is None and said.text in samples
        verdict.samples += sample
        # the prompt's instructions copied, the persona read out of its system prompt (strip_prompt_copies), the
        # recall block's entries, or its headings, the vote's scores and the personality field in the model's words
        # (lines.not_spoken); a sample line of the card (the prompt's example of its voice) is the companion's own
        copied = card is not None and not sample and (
            any(instructions_for(card).copied(s) or not_spoken(s) for s in sentences_of(said.text))
            or strip_prompt_copies(said.text, system_prompt(card, said.language)) != said.text.strip()
            or reads_like_recalled_entry(said.text))
        repeated = said.filler is None and is_repeat(said.text, earlier[said.speaker])
        verdict.prompt_text += copied
        verdict.repeated_own += repeated
        earlier[said.speaker].append(said.text)
        problems = problems_with(Line(said.speaker, said.text, 0.0), said.language, said.answered)
        problems = [p for p in problems if not p.startswith("repeats")]  # parroting is judged below
        own_names = {said.speaker} | ({localized(card.metadata.name, lang) for lang in ("ja", "en")}
                                      if card is not None else set())
        if misidentified(said.text, other_names={n for n in NAMES if n.casefold() not in
                                                 {o.casefold() for o in own_names}}):
            problems.append("introduces itself as another or leaks an id")
        if len(said.answered) >= 12 and is_repeat(said.text, [said.answered], threshold=0.8):
            problems.append("parrots the message it answers")
        if copied:
            problems.append("copies the prompt's instructions")
        if sounds_like_an_assistant(said.text):
            problems.append("speaks as an assistant")
        if repeated:
            problems.append("repeats an earlier line of this companion")
        overlap = "" if card is None or sample else _shared_with_prompt(said, card)
        if overlap:
            verdict.prompt_overlap += 1
            problems.append(f"shares {overlap!r} with the prompt")
        back = [text for speaker, text in everyone if speaker != said.speaker and len(said.text) >= 12
                and not only_a_greeting(said.text)  # a greeting is anyone's ("Hello everyone!" after "Hi everyone!")
                and difflib.SequenceMatcher(None, text, said.text).ratio() >= 0.8]
        if back:
            verdict.said_back += 1
            problems.append(f"says another companion's line back ({back[0]!r})")
        everyone.append((said.speaker, said.text))
        heard = "".join(record.voiced.get(said.line_id, []))
        if heard and _plain(heard) != _plain(said.text):
            withdrawn += 1
            problems.append(f"heard {heard!r}, then the line was {said.text!r}")
        bad += bool(problems) and not all(p.startswith("heard") for p in problems)
        if said.filler is None:
            own += 1
        else:
            reasons[said.filler] += 1
        mark = "BAD" if problems else "smp" if sample else "own" if said.filler is None else "fil"
        if problems or verbose:
            extra = f"  <- {'; '.join(problems)}" if problems else f" [filler: {said.filler}]" if said.filler else ""
            print(f"  {mark} {said.speaker}: {said.text!r}{extra}", flush=True)
    never = [line_id for line_id in record.voiced if line_id not in published]
    for line_id in never:
        print(f"  heard but never published ({line_id}): {record.voiced[line_id]!r}")
    withdrawn += len(never)
    verdict.withdrawn, verdict.bad, verdict.own = withdrawn, bad, own
    print(f"  [{label}] own lines {own} of {len(lines)} ({verdict.samples} of them the card's sample line); "
          f"fillers: {dict(reasons) or 'none'}; prompt text {verdict.prompt_text}; repeated own lines "
          f"{verdict.repeated_own}; sharing text with the prompt {verdict.prompt_overlap}; another's line said "
          f"back {verdict.said_back}", flush=True)
    return verdict


def _shared_with_prompt(said: Said, card: Any) -> str:
    """The longest run of characters ``said`` shares with the texts of its companion's prompt (the system prompt but
    its story and sample lines, the vote's and a turn's instructions) when it is long enough to be copied (8
    characters of Japanese, 24 of English) and not in the message answered; else "". Independent of the app's line
    checks."""
    from companions.cards.card import localized
    from companions.companion.composing import turn_notes
    from companions.companion.prompts import prompt_texts, system_prompt

    texts = prompt_texts(said.language)
    system = system_prompt(card, said.language)
    for own in (card.metadata.story, card.metadata.sample):  # its story and voice told in its words are its own
        system = system.replace(localized(own, said.language), "")
    prompt = "\n".join([system, texts.vote, texts.guidance, texts.events, *turn_notes(said.language, 90)])
    matcher = difflib.SequenceMatcher(None, said.text, prompt, autojunk=False)
    match = matcher.find_longest_match(0, len(said.text), 0, len(prompt))
    shared = said.text[match.a:match.a + match.size].strip()
    enough = 8 if said.language == "ja" else 24
    return shared if len(shared) >= enough and shared not in said.answered else ""


def without_steps(steps: set[str]) -> None:
    """Leaves out steps before a stock filler (``shorter``: the retry's shorter prompt; ``samples``: the card's
    sample line), for every companion from now on."""
    from companions.companion import companion as module

    original = module.compose_line

    async def compose_line(attempt: Any, **options: Any) -> Any:
        if "shorter" in steps:
            options["retry"] = None
        if "samples" in steps:
            options["spare_lines"] = ()
        return await original(attempt, **options)

    module.compose_line = compose_line  # type: ignore[assignment]


async def run(options: argparse.Namespace) -> None:
    server = None
    base_url, model = options.base_url, options.model
    if options.embedded:  # Madoi's own runner on the test model, as after the first-run card's "Talk now"
        os.environ["MADOI_LLM_MODEL_FILE"] = str(real_model_script().paths().model)
    elif base_url is None:
        server = real_model_script().start_server(Path(tempfile.mkdtemp(prefix="madoi-line-quality-")))
        base_url, model = server.base_url, server.model
    if base_url is not None:
        os.environ.update({"MADOI_LLM_BASE_URL": base_url, "MADOI_LLM_MODEL": model})
    os.environ.update({"MADOI_BRIDGE_PORT": "0",
                       "MADOI_CAMERA": "none", "MADOI_LLM_AUTODETECT_LOCAL": "false", "MADOI_LANGUAGE": "ja",
                       "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    passes = [("baseline " + options.baseline_prompts, options.baseline_prompts)] if options.baseline_prompts else []
    passes.append(("working tree", None))
    results = []
    if options.without:
        without_steps(set(options.without.split(",")))
        passes = [(f"{label} without {options.without}", revision) for label, revision in passes]
    try:
        for label, revision in passes:
            use_prompts_of(revision)
            record = await measure(options, label)
            saved = Path(tempfile.mkdtemp(prefix="madoi-line-quality-")) / "lines.json"
            saved.write_text(json.dumps([said.__dict__ for said in record.lines], ensure_ascii=False, indent=1),
                             encoding="utf-8")
            print(f"  (the lines: {saved})")
            results.append((label, judge(record, options.lines, label, options.verbose), len(record.lines)))
    finally:
        if server is not None:
            server.stop()
    for label, verdict, count in results:
        n = min(count, options.lines)
        report(f"heard_then_withdrawn[{label}]", verdict.withdrawn, f"of {n} lines")
        report(f"bad_lines[{label}]", verdict.bad, f"of {n} lines")
        report(f"own_lines[{label}]", verdict.own / max(1, n), f"share of {n} lines")
        report(f"sample_lines[{label}]", verdict.samples, f"of the {verdict.own} own lines")
        report(f"prompt_text[{label}]", verdict.prompt_text, f"of {n} lines")
        report(f"repeated_own[{label}]", verdict.repeated_own, f"of {verdict.own} own lines")
        report(f"prompt_overlap[{label}]", verdict.prompt_overlap, f"of {n} lines (without the app's checks)")
        report(f"said_back[{label}]", verdict.said_back, f"of {n} lines (without the app's checks)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=30)
    parser.add_argument("--base-url")
    parser.add_argument("--embedded", action="store_true",
                        help="Madoi runs the test model itself (MADOI_LLM_MODEL_FILE), not the stock server")
    parser.add_argument("--model", default="test-model")
    parser.add_argument("--baseline-prompts", metavar="REV", help="first the prompt texts of this git revision")
    parser.add_argument("--no-voice", action="store_true", help="voice off (default: on, audio to files)")
    parser.add_argument("--without", metavar="STEPS", help="leave out steps before a filler: shorter,samples")
    parser.add_argument("--per-conversation", type=float, default=240.0, help="seconds before a talk is stopped")
    parser.add_argument("--verbose", action="store_true", help="print the good lines too")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
