"""Madoi headless, default settings, against the demo endpoint behaving like each real server (20x faster): a
Japanese greeting to everyone and an English question naming one companion both get companion lines, and no line
shows JSON, tool syntax or a ``Name:`` prefix. What a new user meets on Ollama, llama-server, llama-cpp-python
(each chat format), LM Studio, vLLM and hosted APIs (profiles.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from companions.testing.openai_server import PROFILES, OpenAITestServer
from companions.testing.openai_server.demo_director import DemoDirector
from tests.app.headless import headless_madoi

FAST = 0.05
WAIT = 6.0  # seconds for a line at FAST (120 s at the real server's pace)
NAMES = ("akari", "hina", "souta", "あかり", "ひな", "颯太", "Akari", "Hina", "Souta", "user", "You", "あなた")
_NOT_A_LINE = re.compile(
    r"[{}]|<tool_call>|</?tools>|functions\.\w+:|\"arguments\"|"  # JSON or tool syntax
    rf"^\s*[\[(（【]?(?:{'|'.join(NAMES)})[\])）】]?\s*(?:\(id: [\w-]+\)|（id: [\w-]+）)?\s*[:：]"  # a name prefix
)


def _bad(lines: list[str]) -> list[str]:
    return [line for line in lines if _NOT_A_LINE.search(line)]


@pytest.mark.parametrize("name", sorted(PROFILES))
async def test_a_greeting_and_a_named_question_get_companion_lines(name: str, tmp_path: Path) -> None:
    director = DemoDirector()
    profile = PROFILES[name].scaled(FAST)
    async with OpenAITestServer(models=["demo-model"], fallback=director, profile=profile) as server, \
            headless_madoi(server.base_url, tmp_path / "home") as madoi:
        sent = await madoi.say("みんな、こんばんは！")
        greeted = await madoi.wait_for(lambda got: len(got) >= 1, WAIT)
        first_line = madoi.lines[0][0] - sent if madoi.lines else None
        before = len(greeted)
        asked = await madoi.say("Souta, what do you like to do on weekends?")
        answered = await madoi.wait_for(
            lambda got: any(m.params.from_ == "souta" for m in got[before:]), WAIT)
        named_line = next((t - asked for t, m in madoi.lines[before:] if m.params.from_ == "souta"), None)
    said = [f"{m.params.from_}: {m.params.message}" for m in answered]
    requests = server.chat_requests()
    refused = sum(1 for r in requests if r.timing.status != 200)
    cut = sum(1 for r in requests if r.timing.interrupted)
    report = (f"profile {name}: greeting first line after {first_line} s, named answer after {named_line} s; "
              f"{len(requests)} requests ({refused} refused, {cut} cut off); lines: {said}")
    assert greeted, report
    assert named_line is not None, report
    assert not _bad([m.params.message for m in answered]), report
