"""While a model server is down, the health check asks it every few seconds whether it is back (GET /models), says
so once it answers, and stops asking; a server that answers 5xx is not back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from app.llm.health_check import ModelHealthCheck, answers
from companions.conversation.readmodel import ConversationChanged, ConversationView
from companions.llm.health import HealthEvent, ModelBack, ModelTrouble, model_health
from companions.llm.types import LLMError
from companions.testing.openai_server import OpenAITestServer
from companions.wire.bus import InProcessBus


@pytest.fixture(autouse=True)
def _no_troubles_left() -> Iterator[None]:
    model_health.forget()
    yield
    model_health.forget()


@pytest.fixture
async def check() -> AsyncIterator[ModelHealthCheck]:
    component = ModelHealthCheck(first_interval_s=0.2, longest_interval_s=0.5)
    await component.start()
    yield component
    await component.stop()


async def test_a_server_that_comes_back_is_found_back_and_no_longer_checked(check: ModelHealthCheck) -> None:
    async with OpenAITestServer() as server:
        port, endpoint = server.port, server.base_url
    heard: list[HealthEvent] = []
    back = asyncio.Event()

    def hear(event: HealthEvent) -> None:
        heard.append(event)
        if isinstance(event, ModelBack):
            back.set()

    unsubscribe = model_health.subscribe(hear)
    try:
        model_health.failed(LLMError("gone", kind="unreachable", endpoint=endpoint))
        assert check.checking == {endpoint}
        await asyncio.sleep(0.7)  # a few checks find nobody
        assert model_health.is_down(endpoint)
        async with OpenAITestServer(port=port) as again:
            await asyncio.wait_for(back.wait(), 3)
            asked = [r.path for r in again.requests]
        assert heard[-1] == ModelBack(endpoint)
        assert asked
        assert set(asked) == {"/v1/models"}
        await asyncio.sleep(0.1)
        assert check.checking == frozenset()
    finally:
        unsubscribe()


async def test_a_refused_request_is_not_checked(check: ModelHealthCheck) -> None:
    model_health.failed(LLMError("bad key", kind="refused", status=401, endpoint="http://127.0.0.1:9/v1"))
    assert check.checking == frozenset()


async def test_only_an_answer_below_500_counts() -> None:
    async with OpenAITestServer() as server:
        assert await answers(server.base_url)
    assert not await answers("http://127.0.0.1:9/v1", timeout_s=0.5)


async def test_a_local_server_gone_since_it_last_answered_is_known_when_a_conversation_starts() -> None:
    async with OpenAITestServer() as server:
        endpoint = server.base_url
        model_health.answered(endpoint)  # a companion's request went there
    bus = InProcessBus()
    check = ModelHealthCheck(bus, first_interval_s=5.0)
    await check.start()
    told = asyncio.Event()
    unsubscribe = model_health.subscribe(lambda event: told.set())
    try:
        bus.publish(ConversationChanged(ConversationView(status="running"), "started"))  # the user's message
        await asyncio.wait_for(told.wait(), 1.0)
        trouble = model_health.trouble(endpoint)
        assert isinstance(trouble, ModelTrouble)
        assert (trouble.kind, trouble.cause) == ("unreachable", "connection-refused")
    finally:
        unsubscribe()
        await check.stop()
        await bus.aclose()
