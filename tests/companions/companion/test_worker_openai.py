"""The worker and a sample companion against a real OpenAI-compatible HTTP server through the real `openai` client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.companion.worker import TextStreamed, Worker
from companions.llm.openai_backend import OpenAIChatModel, RetryPolicy
from companions.llm.types import ChatMessage
from companions.testing.openai_server import (
    OpenAITestServer,
    error_reply,
    stall_reply,
    text_reply,
    tool_call_reply,
)
from companions.tools.functions import ToolRegistry, tool
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message
from companions.wire.query_broker import QueryBroker
from tests.companions.query_doubles import Voice


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(api_key="sk-test") as s:
        yield s


def model_for(server: OpenAITestServer) -> OpenAIChatModel:
    retry = RetryPolicy(max_retries=1, base_delay_s=0.01, max_delay_s=0.02)
    return OpenAIChatModel(base_url=server.base_url, model="test-model", api_key="sk-test", retry=retry)


async def test_a_sample_companion_answers_over_http_by_calling_speak(server: OpenAITestServer) -> None:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    voice = Voice()
    broker.register(voice)
    order: list[str] = []
    bus.subscribe("messages", lambda m: order.append(m.params.from_), name="t")
    server.script(
        text_reply('{"need_response": true, "needs_facts": false}'),
        tool_call_reply(("speak", {"message": "Souta: It is from about 1850.\nUser: wow", "emotion": "neutral"})),
        text_reply(""),
    )
    model = model_for(server)
    card = load_cards([sample_cards_dir()]).by_id()["souta"]
    souta = Companion(card, model, bus=bus, queries=broker, language="en")
    await souta.start()
    question = Message.create(from_="user", message="Souta, how old is this map?", to=["souta"])
    bus.publish(question)
    await bus.drain()
    result = await souta.take_turn(question)
    await bus.drain()
    assert result.status == "finished"
    assert [q.params.body for q in voice.said] == [
        {"message": "It is from about 1850.", "emotion": "neutral",
         "voice": "en-gb;rate=160;half_tone=-7;all_pass=0.61"}]  # Souta's English voice with his card's tuning
    assert order == ["user", "souta"]
    bodies = [r.body for r in server.chat_requests()]
    assert bodies[0]["response_format"]["type"] == "json_schema"
    assert {t["function"]["name"] for t in bodies[1]["tools"]} == {"speak", "companions_network", "search"}
    assert "Reply briefly." in bodies[1]["messages"][-1]["content"]
    tool_results = [m for m in bodies[2]["messages"] if m["role"] == "tool"]
    assert tool_results[0]["tool_call_id"] == "call_0"
    server.assert_used_up()
    await souta.aclose()
    await model.aclose()
    await broker.aclose()
    await bus.aclose()


async def test_cancel_mid_stream_over_http_leaves_history_clean(server: OpenAITestServer) -> None:
    bus = InProcessBus()
    streamed = asyncio.Event()
    bus.subscribe("events", lambda e: streamed.set() if isinstance(e, TextStreamed) else None, name="t")
    server.script(stall_reply("I was about to"))
    model = model_for(server)
    record: list[ChatMessage] = []
    task = asyncio.create_task(Worker(model, ToolRegistry(), bus=bus).run([ChatMessage.user("hi")], record=record))
    await asyncio.wait_for(streamed.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.client_gone.wait(), 5)
    assert record == []
    await model.aclose()
    await bus.aclose()


async def test_parallel_tools_and_a_server_error_over_http(server: OpenAITestServer) -> None:
    started: list[str] = []
    both = asyncio.Event()

    @tool
    async def lookup(key: str) -> str:
        """Looks a key up; returns only when both lookups have started (so they must run concurrently)."""
        started.append(key)
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 2)
        return json.dumps({key: len(key)})

    server.script(
        tool_call_reply(("lookup", {"key": "alpha"}), ("lookup", {"key": "be"})),
        error_reply(500), error_reply(500),
    )
    model = model_for(server)
    result = await Worker(model, ToolRegistry([lookup])).run([ChatMessage.user("look both up")])
    assert [r.content for r in result.tool_results] == ['{"alpha": 5}', '{"be": 2}']
    assert result.status == "model_error"
    assert "500" in result.reason or "server" in result.reason.lower()
    server.assert_used_up()
    await model.aclose()
