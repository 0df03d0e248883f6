"""A new user's first minute on a server behaving like llama-cpp-python: the app learns the server before
the user speaks (no completion spent on it: it is a server Madoi knows), the greeting to everyone costs one request
before its line (the card's events are filled after it), and a second start knows the server from the data
directory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.llm.capabilities import endpoint_capabilities, forget_endpoints
from companions.llm.learning import FILE_NAME
from companions.testing.openai_server import PROFILES, OpenAITestServer, RecordedRequest
from companions.testing.openai_server.demo_director import DemoDirector, request_kind
from companions.wire.protocol import Message
from tests.waiting import wait_until

SCALE = 0.2  # the profile's delays x this


def kind(request: RecordedRequest) -> str:
    return "warm-up" if request.body.get("max_tokens") == 1 else request_kind(request.body)


async def test_the_greeting_finds_the_server_known_and_costs_one_request(madoi_home: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    forget_endpoints()
    profile = PROFILES["llama-cpp-python"].scaled(SCALE)
    async with OpenAITestServer(models=["demo-model"], fallback=DemoDirector(), profile=profile) as server:
        monkeypatch.setenv("MADOI_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("MADOI_LANGUAGE", "ja")
        runtime = Runtime(load_settings())
        await runtime.start()
        try:
            await runtime.models_resolved()  # the model is found after the start
            assert runtime.parts.models.learning is not None
            await runtime.parts.models.learning
            conversation = runtime.parts.conversation_manager
            await wait_until(lambda: conversation.warm_ups >= 1, timeout=30)  # the user reads the window meanwhile
            # a server Madoi knows: no completion was spent learning it (only the warm-up of the likely speaker)
            assert [kind(r) for r in server.chat_requests()] == ["warm-up"]
            caps = endpoint_capabilities(server.base_url, "demo-model")
            assert (caps.server_kind, caps.structured_mode, caps.tools_as_text) == ("llama-cpp-python",
                                                                                    "json_object", True)
            lines: list[tuple[float, Message]] = []
            runtime.bus.subscribe("messages", lambda m: lines.append((asyncio.get_running_loop().time(), m))
                                  if isinstance(m, Message) and m.params.from_ != "user" else None, name="test")
            before = len(server.chat_requests())
            runtime.parts.conversations.send("みんな、こんばんは！")
            await wait_until(lambda: bool(lines), timeout=30)
            line_at, first = lines[0]
            asked = server.chat_requests()[before:]
            ahead = [kind(r) for r in asked if r.arrived < line_at]
            assert ahead == ["turn"], ahead  # one request before the first line: no events, no refused format
            assert not asked[0].body.get("tools")  # llama-cpp-python's model writes tool calls as text: none offered
            assert first.params.message
            # the speaker's card events are filled after its line, for its next one
            await wait_until(lambda: any(kind(r) == "event_params" for r in server.chat_requests()[before:]),
                             timeout=30)
        finally:
            await runtime.stop()
        kept = json.loads((madoi_home / FILE_NAME).read_text())
        assert [e["server"] for e in kept["endpoints"]] == ["llama-cpp-python"]
        assert kept["endpoints"][0]["samples"] > 0  # the speed measured meanwhile is kept too

        forget_endpoints()  # the next start is a new process: only the file remembers
        runtime = Runtime(load_settings())
        await runtime.start()
        try:
            await runtime.models_resolved()  # the model is found after the start
            assert runtime.parts.models.learning is not None
            await runtime.parts.models.learning
            caps = endpoint_capabilities(server.base_url, "demo-model")
            assert caps.samples > 0  # the speed is known before the first request of this start
            assert (caps.structured_mode, caps.tools_as_text) == ("json_object", True)
        finally:
            await runtime.stop()
