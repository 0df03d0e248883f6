"""Madoi headless on a server behaving like llama-cpp-python (one request at a time, a prompt cache holding the last
prompt): while idle it warms the likely speaker's prompt, so the first request of the user's greeting finds most of
its prompt in the server's cache; with warming turned off the same request starts cold."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from companions.testing.openai_server import PROFILES, OpenAITestServer, RecordedRequest
from companions.testing.openai_server.demo_director import DemoDirector
from tests.app.headless import headless_madoi

SCALE = 0.2  # the profile's delays x this: prompts at ~850 tokens/s, so a cold prompt still shows
WAIT = 30.0


def warm_up(request: RecordedRequest) -> bool:
    return request.body.get("max_tokens") == 1


async def greeting_turn(tmp_path: Path, **env: str) -> tuple[list[RecordedRequest], RecordedRequest]:
    """The warm-ups sent before the greeting, and the first request the greeting caused. A Japanese user's app: the
    warm-up is in the app's language before anything was said, and the prompt follows the message's language."""
    profile = PROFILES["llama-cpp-python"].scaled(SCALE)
    async with OpenAITestServer(models=["demo-model"], fallback=DemoDirector(), profile=profile) as server, \
            headless_madoi(server.base_url, tmp_path / "home", MADOI_LANGUAGE="ja", **env) as madoi:
        await asyncio.sleep(2.5)  # the app idles after starting (the user reads the window)
        before = len(server.chat_requests())
        await madoi.say("みんな、こんばんは！")
        await madoi.wait_for(lambda got: len(got) >= 1, WAIT)
        requests = server.chat_requests()
    warm_ups = [r for r in requests[:before] if warm_up(r)]
    first = next(r for r in requests[before:] if not warm_up(r))
    return warm_ups, first


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
async def test_an_idle_app_warms_the_likely_speakers_prompt_and_the_greeting_finds_it_cached(tmp_path: Path) -> None:
    warm_ups, first = await greeting_turn(tmp_path / "on")
    assert len(warm_ups) == 1, warm_ups
    assert warm_ups[0].timing.status == 200
    share = first.timing.cached_tokens / first.timing.prompt_tokens
    assert share >= 0.6, (first.timing, share)  # the persona came from the cache: only the greeting is new
    off_ups, cold = await greeting_turn(tmp_path / "off", MADOI_CONVERSATION_WARM_PROMPTS="false")
    assert off_ups == []
    assert cold.timing.cached_tokens / cold.timing.prompt_tokens < 0.2, cold.timing
