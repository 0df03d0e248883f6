"""Madoi with default settings in front of a real llama-cpp-python server (the model's own chat template), used as a
new user would: a greeting to everyone, and a question naming one companion. What a user needs: a reply soon, from
the right companion, in the language of the message, that is a line of talk (no JSON, no tool syntax, no name
prefix).

``MADOI_TEST_CHAT_FORMAT=chatml`` (or another ``--chat_format``) runs the same conversation on that server instead.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.conversation.readmodel import ConversationChanged
from companions.wire.bus import BusItem
from companions.wire.protocol import Message
from tests.conftest import REPO
from tests.realmodel.conftest import RealServers

pytestmark = pytest.mark.realmodel

# The 0.5B model's first line takes ~28 s with the two cores to itself; ./test runs these beside the other lane of
# tests, where one took 60.0 s of its 60 s (a fresh-clone CI run). The bound keeps a hung turn from waiting forever.
REPLY_WITHIN_S = 120.0
KANA_OR_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
TOOL_OR_JSON = ("<tool_call>", "</tool_call>", "<tools>", "functions.", '{"', '"}', "```")


def _companion_names() -> set[str]:
    """Every id and name (ja and en) of the sample companions: none of them may open a companion's line."""
    names: set[str] = set()
    for card in (REPO / "resources" / "companions").iterdir():
        if card.suffix == ".toml":
            data = tomllib.loads(card.read_text(encoding="utf-8"))
        elif card.suffix in {".yaml", ".yml"}:
            data = yaml.safe_load(card.read_text(encoding="utf-8"))
        else:
            continue
        meta = data["metadata"]
        names |= {meta["id"], *meta["name"].values()}
    return names


NAMES = _companion_names()
NAME_PREFIX = re.compile(r"^\s*[\[(（「]?\s*(" + "|".join(map(re.escape, sorted(NAMES, key=len, reverse=True)))
                         + r")\s*[\])）」]?\s*(\((id|ID)\s*[:：][^)]*\)\s*)?[:：]", re.IGNORECASE)


@dataclass(frozen=True)
class Line:
    speaker: str
    text: str
    after_s: float  # since the user's message


def _similar(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.casefold().strip(), b.casefold().strip()).ratio()


def problems_with(line: Line, language: str, previous: str) -> list[str]:
    """What a user would object to in a companion's line answering a message in ``language`` ("ja" or "en"), said
    right after ``previous`` (the user's message or the line before)."""
    found = []
    if _similar(line.text, previous) >= 0.8:
        found.append(f"repeats the line before it ({previous!r})")
    if not line.text.strip():
        found.append("empty")
    for syntax in TOOL_OR_JSON:
        if syntax in line.text:
            found.append(f"contains {syntax!r}")
    if NAME_PREFIX.match(line.text):
        found.append("starts with a speaker's name")
    letters = [ch for ch in line.text if ch.isalpha()]
    if language == "ja" and not KANA_OR_KANJI.search(line.text):
        found.append("not Japanese")
    if language == "en":
        ascii_share = sum(ch.isascii() for ch in letters) / max(1, len(letters))
        if ascii_share < 0.9:
            found.append(f"not English ({ascii_share:.0%} ASCII letters)")
    return found


class Talk:
    """Runs Madoi (the same runtime the window and ``--headless`` use) and records what the companions say."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.lines: list[Line] = []
        self.sent_at = 0.0
        self.ended = False
        self.changed = asyncio.Event()
        runtime.bus.subscribe("messages", self._heard, name="real-conversation-test", direct=True)
        runtime.bus.subscribe("events", self._watch, name="real-conversation-test-end", direct=True)

    def _watch(self, item: BusItem) -> None:
        if isinstance(item, ConversationChanged) and item.view.status == "ended" and self.lines:
            self.ended = True
            self.changed.set()

    def _heard(self, item: BusItem) -> None:
        if isinstance(item, Message) and item.params.from_ in self.runtime.parts.cast.companions:
            self.lines.append(Line(item.params.from_, item.params.message, time.monotonic() - self.sent_at))
            self.changed.set()

    def say(self, text: str, to: list[str] | None = None) -> None:
        self.sent_at = time.monotonic()
        self.runtime.parts.conversations.send(text, to=to)

    async def first_line(self, speaker: str | None = None, within: float = REPLY_WITHIN_S) -> Line:
        def found() -> Line | None:
            return next((x for x in self.lines if speaker is None or x.speaker == speaker), None)

        try:
            async with asyncio.timeout(within):
                while (line := found()) is None:
                    self.changed.clear()
                    await self.changed.wait()
                return line
        except TimeoutError:
            who = speaker or "any companion"
            raise AssertionError(f"no line from {who} within {within:.0f} s; lines: {self.lines}") from None

    async def next_lines(self, count: int, until_s: float = REPLY_WITHIN_S) -> None:
        """Lets the talk go on until ``count`` lines were said, the conversation ended, or ``until_s`` seconds have
        passed since the user's message (not a failure: what was said by then is checked)."""
        try:
            async with asyncio.timeout(max(0.0, self.sent_at + until_s - time.monotonic())):
                while len(self.lines) < count and not self.ended:
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            pass


@pytest.fixture
async def talk(madoi_home: Path, monkeypatch: pytest.MonkeyPatch, real_servers: RealServers):
    real_server = real_servers.get(os.environ.get("MADOI_TEST_CHAT_FORMAT") or None)
    monkeypatch.setenv("MADOI_LLM_BASE_URL", real_server.base_url)
    monkeypatch.setenv("MADOI_LLM_MODEL", real_server.model)
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert await runtime.models_resolved() is None, runtime.model_problem()
        yield Talk(runtime)
    finally:
        await runtime.stop()


def _report(talk: Talk) -> str:
    return "\n".join(f"  {x.after_s:5.1f} s {x.speaker}: {x.text!r}" for x in talk.lines)


def _objections(talk: Talk, user_said: str, language: str) -> dict[str, list[str]]:
    previous = [user_said] + [x.text for x in talk.lines]
    return {f"{x.speaker}: {x.text!r}": p for x, before in zip(talk.lines, previous, strict=False)
            if (p := problems_with(x, language, before))}


async def test_a_japanese_greeting_to_everyone_gets_a_japanese_line_of_talk(talk: Talk) -> None:
    greeting = "みなさん、こんにちは！"
    talk.say(greeting)
    first = await talk.first_line()
    await talk.next_lines(2)  # and the line that follows it, if one comes soon
    print(f"\ngreeting to everyone:\n{_report(talk)}")
    bad = _objections(talk, greeting, "ja")
    assert not bad, f"lines a user should never see or hear:\n{bad}"
    assert first.after_s < REPLY_WITHIN_S


async def test_an_english_question_naming_akari_is_answered_by_akari_in_english(talk: Talk) -> None:
    question = "Akari, what is your favourite star?"
    talk.say(question, to=["akari"])
    answer = await talk.first_line("akari")
    await talk.next_lines(2)
    print(f"\nquestion to akari:\n{_report(talk)}")
    bad = _objections(talk, question, "en")
    assert not bad, f"lines a user should never see or hear:\n{bad}"
    assert answer.after_s < REPLY_WITHIN_S


PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")


async def test_an_idle_app_warms_the_likely_speaker_so_the_greeting_reuses_the_servers_prompt_cache(
    talk: Talk, real_servers: RealServers,
) -> None:
    server = real_servers.get(os.environ.get("MADOI_TEST_CHAT_FORMAT") or None)
    manager = talk.runtime.parts.conversation_manager
    assert manager is not None
    async with asyncio.timeout(REPLY_WITHIN_S):
        while manager.warm_ups == 0:  # noqa: ASYNC110 - the warm-up runs on its own once the app idles
            await asyncio.sleep(0.1)
    logged = len(server.log.read_text(errors="replace"))
    talk.say("みなさん、こんばんは！")
    first = await talk.first_line()
    # the server's own account of the greeting's first request: how much of its prompt came from its cache
    hits = [(int(a), int(b)) for a, b in PREFIX_HIT.findall(server.log.read_text(errors="replace")[logged:])]
    assert hits, server.log_tail()
    reused, remaining = hits[0]
    print(f"\nwarmed greeting: first request reused {reused} of {reused + remaining} prompt tokens; "
          f"{first.speaker} after {first.after_s:.1f} s: {first.text!r}")
    assert reused / (reused + remaining) >= 0.6, hits
