"""A new user's first minute on the real llama-cpp-python server: Madoi learns the server before the user
speaks without spending a completion on it, the greeting to everyone costs at most two requests before its first
kept word, nothing streamed is taken back, the first word comes within a bound of one cold completion, and a second
start knows the server (and its speed) from the data directory."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

import openai
import pytest

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.companion.worker import TextStreamed
from companions.llm.capabilities import endpoint_capabilities, forget_endpoints
from companions.wire.protocol import Message
from tests.realmodel.conftest import RealServers

pytestmark = pytest.mark.realmodel

WITHIN_S = 120.0
# The goal is 1.5x one cold completion; CI machines are shared and noisy (the load of other test processes
# slows the server's two threads unevenly), so this bound only catches a return of the 5-6x of learning during the
# first turn.
FIRST_WORD_BOUND = 3.0
COMPLETION = re.compile(r'"POST /v1/chat/completions HTTP/1\.1"')


def _plain(text: str) -> str:
    return "".join(text.split())


async def _cold_completion(base_url: str, model: str) -> float:
    """One cold completion of a companion-sized prompt (~400 tokens in, 40 out), streamed to its end."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    system = (f"[{time.time_ns()}] You are \"Akari\", a cheerful companion who loves the night sky, talking with "
              "people sitting together in a circle. Speak only as yourself, in one or two short sentences. ") * 8
    began = time.perf_counter()
    stream = await client.chat.completions.create(
        model=model, stream=True, max_tokens=40, temperature=0,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "みんな、こんばんは！"}])
    async for _ in stream:
        pass
    await client.close()
    return time.perf_counter() - began


async def test_the_first_greeting_finds_the_server_known_and_nothing_is_taken_back(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, real_servers: RealServers) -> None:
    server = real_servers.get(os.environ.get("MADOI_TEST_CHAT_FORMAT") or None)
    floor_s = await _cold_completion(server.base_url, server.model)
    monkeypatch.setenv("MADOI_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MADOI_LLM_MODEL", server.model)
    monkeypatch.setenv("MADOI_LANGUAGE", "ja")
    forget_endpoints()
    logged = len(server.log.read_text(errors="replace"))
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        await runtime.models_resolved()  # the model is found after the start
        learning = runtime.parts.models.learning
        assert learning is not None
        await learning
        conversation = runtime.parts.conversation_manager
        async with asyncio.timeout(WITHIN_S):
            while conversation.warm_ups == 0:  # noqa: ASYNC110 - the warm-up runs once the app idles
                await asyncio.sleep(0.1)
        before = server.log.read_text(errors="replace")[logged:]
        assert len(COMPLETION.findall(before)) == 1, before[-3000:]  # the warm-up only: nothing spent learning
        caps = endpoint_capabilities(server.base_url, server.model)
        assert (caps.server_kind, caps.structured_mode, caps.tools_as_text) == ("llama-cpp-python",
                                                                                "json_object", True)
        streamed: list[tuple[float, str, str, bool]] = []
        lines: list[tuple[float, Message]] = []
        arrived = asyncio.Event()

        def watch(item: object) -> None:
            if isinstance(item, TextStreamed):
                streamed.append((time.perf_counter(), item.companion_id, item.text, item.done))
            elif isinstance(item, Message) and item.params.from_ != "user":
                lines.append((time.perf_counter(), item))
                arrived.set()

        runtime.bus.subscribe(["events", "messages"], watch, name="first-contact", direct=True)
        logged = len(server.log.read_text(errors="replace"))
        began = time.perf_counter()
        runtime.parts.conversations.send("みんな、こんばんは！")
        async with asyncio.timeout(WITHIN_S):
            await arrived.wait()
        line_at, line = lines[0]
        asked = len(COMPLETION.findall(server.log.read_text(errors="replace")[logged:]))
        pieces = [(t, text) for t, who, text, done in streamed if who == line.params.from_ and text and t <= line_at]
        shown = _plain("".join(text for _, text in pieces))
        # nothing streamed that the line does not say: the first streamed piece is the first kept word
        assert _plain(line.params.message).startswith(shown), (shown, line.params.message)
        kept_at = pieces[0][0] if pieces else line_at
        first_word_s = kept_at - began
        print(f"\nfirst kept word after {first_word_s:.1f} s ({first_word_s / floor_s:.2f}x one cold completion of "
              f"{floor_s:.1f} s; load average {os.getloadavg()[0]:.1f}); {asked} completion request(s) by the time "
              f"the line was published; {line.params.from_}: {line.params.message!r}")
        assert asked <= 3  # the line (and a retry at most), the card's events after it
        assert first_word_s <= FIRST_WORD_BOUND * floor_s
    finally:
        await runtime.stop()

    forget_endpoints()  # the next start is a new process: only the data directory remembers
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        await runtime.models_resolved()  # the model is found after the start
        learning = runtime.parts.models.learning
        assert learning is not None
        await learning
        caps = endpoint_capabilities(server.base_url, server.model)
        assert caps.samples > 0  # the speed is known before this start's first request
        assert (caps.structured_mode, caps.tools_as_text) == ("json_object", True)
    finally:
        await runtime.stop()
