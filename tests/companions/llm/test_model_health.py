"""A model that cannot be reached, goes away mid-request, times out or refuses is told apart (``LLMError.kind``), and
the endpoint's trouble is said once on the bus however many requests find it, then once that it is back."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from companions.llm.health import ModelBack, ModelTrouble, model_health, publish_model_health
from companions.llm.openai_backend import RetryPolicy, build_chat_model
from companions.llm.types import ChatMessage, ChatRequest, LLMError, complete
from companions.testing.openai_server import OpenAITestServer, error_reply, stall_reply, text_reply
from companions.wire.bus import BusItem, InProcessBus

pytestmark = pytest.mark.usefixtures("fresh_endpoints")

HELLO = ChatRequest(messages=(ChatMessage.user("hello"),))
NO_RETRY = RetryPolicy(max_retries=0)


@pytest.fixture(autouse=True)
def _no_troubles_left() -> Iterator[None]:
    model_health.forget()
    yield
    model_health.forget()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


async def _failure(base_url: str, *, timeout_s: float = 10.0, retry: RetryPolicy = NO_RETRY) -> LLMError:
    model = build_chat_model(base_url, "test-model", timeout_s=timeout_s, retry=retry)
    try:
        with pytest.raises(LLMError) as info:
            await complete(model, HELLO)
    finally:
        await model.aclose()
    return info.value


async def test_a_refused_connection_is_unreachable() -> None:
    error = await _failure(f"http://127.0.0.1:{_closed_port()}/v1")
    assert (error.kind, error.cause, error.model_down) == ("unreachable", "connection-refused", True)


async def test_an_unknown_host_is_unreachable() -> None:
    error = await _failure("http://no-such-host.invalid:8080/v1")
    assert (error.kind, error.cause) == ("unreachable", "unknown-host")


async def test_a_server_that_dies_mid_answer_crashed(server: OpenAITestServer) -> None:
    server.script(stall_reply("Hel"))
    failing = asyncio.ensure_future(_failure(server.base_url))
    await server.wait_for_requests(1)
    await asyncio.sleep(0.1)
    await server.stop()  # the process died: the connection drops in the middle of the stream
    error = await failing
    assert (error.kind, error.cause, error.model_down) == ("crashed", "connection-lost", True)
    assert "went away in the middle of a request" in str(error)


async def test_no_answer_in_time_timed_out(server: OpenAITestServer) -> None:
    server.script(stall_reply(before_headers=True))
    error = await _failure(server.base_url, timeout_s=0.3)
    assert (error.kind, error.model_down) == ("timed-out", True)


async def test_a_refused_request_is_refused_not_down(server: OpenAITestServer) -> None:
    server.script(error_reply(401, "bad key"))
    error = await _failure(server.base_url)
    assert (error.kind, error.model_down, error.status) == ("refused", False, 401)


async def test_three_companions_failing_make_one_trouble_and_one_back(server: OpenAITestServer) -> None:
    port = server.port
    bus = InProcessBus()
    seen: list[BusItem] = []
    bus.subscribe("events", seen.append, name="seen", direct=True)
    stop_publishing = publish_model_health(bus)
    try:
        await server.stop()
        base_url = f"http://127.0.0.1:{port}/v1"
        errors = await asyncio.gather(*(_failure(base_url) for _ in range(3)))
        assert {e.kind for e in errors} == {"unreachable"}
        troubles = [item for item in seen if isinstance(item, ModelTrouble)]
        assert len(troubles) == 1, troubles  # one notice, not one per companion
        assert (troubles[0].endpoint, troubles[0].kind, troubles[0].host) == (base_url, "unreachable",
                                                                               f"127.0.0.1:{port}")
        assert model_health.is_down(base_url + "/")

        async with OpenAITestServer(port=port) as again:
            again.script(text_reply("I'm back"), text_reply("still here"))
            model = build_chat_model(base_url, "test-model", retry=NO_RETRY)
            assert (await complete(model, HELLO)).message.text == "I'm back"
            assert (await complete(model, HELLO)).message.text == "still here"
            await model.aclose()
        assert [item for item in seen if isinstance(item, ModelBack)] == [ModelBack(base_url)]
        assert not model_health.is_down(base_url)
    finally:
        stop_publishing()


async def test_the_trouble_is_said_at_the_first_failed_attempt_not_after_the_retries() -> None:
    base_url = f"http://127.0.0.1:{_closed_port()}/v1"
    told = asyncio.Event()
    unsubscribe = model_health.subscribe(lambda event: told.set())
    slow_retries = RetryPolicy(max_retries=3, base_delay_s=1.0, max_delay_s=1.0)
    failing = asyncio.ensure_future(_failure(base_url, retry=slow_retries))
    try:
        await asyncio.wait_for(told.wait(), 1.0)  # the retries go on for seconds more
        assert not failing.done()
    finally:
        unsubscribe()
        failing.cancel()


async def test_models_chosen_again_forget_the_servers_no_longer_used(server: OpenAITestServer) -> None:
    """After "Restart the model" the runner answers at a new address: the old one, gone, must not be looked at when
    the next conversation opens (it would be found refusing and hold the user's messages until it came back)."""
    gone = f"http://127.0.0.1:{_closed_port()}/v1"
    await _failure(gone)
    server.script(text_reply("hi"))
    model = build_chat_model(server.base_url, "test-model", retry=NO_RETRY)
    try:
        await complete(model, HELLO)
    finally:
        await model.aclose()
    assert set(model_health.endpoints) == {gone, server.base_url.rstrip("/")}
    model_health.clear()  # the models are connected again
    assert model_health.endpoints == ()
    assert not model_health.is_down(gone)
