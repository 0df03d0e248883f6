"""Madoi with default settings in front of a real llama-cpp-python server (the model's own chat template), used as a
new user would: a greeting to everyone, and a question naming one companion. What a user needs: a reply soon, from
the right companion, in the language of the message, that is a line of talk (no JSON, no tool syntax, no name
prefix)."""

from __future__ import annotations

import asyncio
import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from app.runtime import Runtime
from app.settings import load_settings
from companions.bus import BusItem
from companions.protocol import Message
from tests.conftest import REPO
from tests.realmodel.conftest import RealServer

pytestmark = pytest.mark.realmodel

REPLY_WITHIN_S = 60.0
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


def problems_with(line: Line, language: str) -> list[str]:
    """What a user would object to in a companion's line answering a message in ``language`` ("ja" or "en")."""
    found = []
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
        self.changed = asyncio.Event()
        runtime.bus.subscribe("messages", self._heard, name="real-conversation-test", direct=True)

    def _heard(self, item: BusItem) -> None:
        if isinstance(item, Message) and item.params.from_ in (self.runtime.cast.companions if self.runtime.cast
                                                                else {}):
            self.lines.append(Line(item.params.from_, item.params.message, time.monotonic() - self.sent_at))
            self.changed.set()

    def say(self, text: str, to: list[str] | None = None) -> None:
        self.sent_at = time.monotonic()
        self.runtime.send_user_message(text, to=to)

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


@pytest.fixture
async def talk(madoi_home: Path, monkeypatch: pytest.MonkeyPatch, real_server: RealServer):
    monkeypatch.setenv("MADOI_LLM_BASE_URL", real_server.base_url)
    monkeypatch.setenv("MADOI_LLM_MODEL", real_server.model)
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert runtime.model_problem() is None, runtime.model_problem()
        yield Talk(runtime)
    finally:
        await runtime.stop()


def _report(talk: Talk) -> str:
    return "\n".join(f"  {x.after_s:5.1f} s {x.speaker}: {x.text!r}" for x in talk.lines)


async def test_a_japanese_greeting_to_everyone_gets_a_japanese_line_of_talk(talk: Talk) -> None:
    talk.say("みなさん、こんにちは！")
    first = await talk.first_line()
    print(f"\ngreeting to everyone:\n{_report(talk)}")
    bad = {f"{x.speaker}: {x.text!r}": p for x in talk.lines if (p := problems_with(x, "ja"))}
    assert not bad, f"lines a user should never see or hear:\n{bad}"
    assert first.after_s < REPLY_WITHIN_S


async def test_an_english_question_naming_akari_is_answered_by_akari_in_english(talk: Talk) -> None:
    talk.say("Akari, what is your favourite star?", to=["akari"])
    answer = await talk.first_line("akari")
    print(f"\nquestion to akari:\n{_report(talk)}")
    bad = {f"{x.speaker}: {x.text!r}": p for x in talk.lines if (p := problems_with(x, "en"))}
    assert not bad, f"lines a user should never see or hear:\n{bad}"
    assert answer.after_s < REPLY_WITHIN_S
