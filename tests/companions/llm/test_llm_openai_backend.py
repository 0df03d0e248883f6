"""The OpenAI-compatible backend, through the real ``openai`` client, against the local test server."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

import pytest

from companions.llm.openai_backend import OpenAIChatModel, RetryPolicy, build_chat_model
from companions.llm.types import (
    ChatMessage,
    ChatRequest,
    Completion,
    ImagePart,
    JsonSchemaFormat,
    LLMError,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolSpec,
    complete,
)
from companions.testing.openai_server import (
    OpenAITestServer,
    error_reply,
    stall_reply,
    text_reply,
    tool_call_reply,
)

pytestmark = pytest.mark.usefixtures("fresh_endpoints")

KEY = "sk-test-SECRET-0123456789"
FAST = RetryPolicy(max_retries=3, base_delay_s=0.01, max_delay_s=0.05)
HELLO = ChatRequest(messages=(ChatMessage.user("hello"),))


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(api_key=KEY, models=["test-model", "vision-model"]) as s:
        yield s


@pytest.fixture
async def model(server: OpenAITestServer) -> AsyncIterator[OpenAIChatModel]:
    m = build_chat_model(server.base_url, "test-model", KEY, retry=FAST, timeout_s=10)
    yield m
    await m.aclose()


async def collect(model: OpenAIChatModel, request: ChatRequest = HELLO) -> list[StreamEvent]:
    return [event async for event in model.stream(request)]


async def test_text_streams_as_deltas_then_one_completion(server: OpenAITestServer, model: OpenAIChatModel) -> None:
    server.script(text_reply("こんにちは、元気?", chunks=["こんにちは", "、", "元気?"]))
    events = await collect(model)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["こんにちは", "、", "元気?"]
    assert isinstance(events[-1], Completion)
    assert sum(isinstance(e, Completion) for e in events) == 1
    assert events[-1].message.text == "こんにちは、元気?"
    assert events[-1].finish_reason == "stop"


async def test_request_carries_tools_images_names_and_json_schema(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    server.script(text_reply("ok"))
    request = ChatRequest(
        messages=(
            ChatMessage.system("be kind"),
            ChatMessage(
                role="user",
                content=[TextPart(text="what is this?"), ImagePart(url="data:image/jpeg;base64,AAAA")],
                name="Taro",
            ),
            ChatMessage.user("日本語の名前", name="花子"),
        ),
        tools=(ToolSpec(name="speak", description="say it", parameters={"type": "object", "properties": {}}),),
        tool_choice="required",
        response_format=JsonSchemaFormat(name="vote", schema_={"type": "object"}),
        temperature=0.2,
        max_tokens=50,
    )
    await complete(model, request)
    body = server.chat_requests()[0].body
    assert body["stream"] is True
    assert body["model"] == "test-model"
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
    ]
    assert body["messages"][1]["name"] == "Taro"
    assert "name" not in body["messages"][2]  # OpenAI rejects non-ASCII names
    assert body["tools"][0]["function"]["name"] == "speak"
    assert body["tool_choice"] == "required"
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "vote", "schema": {"type": "object", "title": "vote"}, "strict": False},
    }
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 50


async def test_text_only_model_drops_images(server: OpenAITestServer) -> None:
    server.script(text_reply("ok"))
    m = build_chat_model(server.base_url, "test-model", KEY, supports_images=False)
    content = [TextPart(text="look"), ImagePart(url="https://example.com/a.png")]
    await complete(m, ChatRequest(messages=(ChatMessage(role="user", content=content),)))
    await m.aclose()
    assert server.chat_requests()[0].body["messages"][0]["content"] == [{"type": "text", "text": "look"}]


async def test_tool_call_fragments_are_assembled(server: OpenAITestServer, model: OpenAIChatModel) -> None:
    server.script(
        tool_call_reply(
            ("speak", {"text": "やあ、みんな", "emotion": "happy"}),
            ("gesture", {"name": "wave"}),
            text="Let me say hi.",
            fragment_size=3,
        )
    )
    completion = await complete(model, HELLO)
    calls = completion.message.tool_calls
    assert [c.name for c in calls] == ["speak", "gesture"]
    assert [c.id for c in calls] == ["call_0", "call_1"]
    assert json.loads(calls[0].arguments) == {"text": "やあ、みんな", "emotion": "happy"}
    assert json.loads(calls[1].arguments) == {"name": "wave"}
    assert completion.message.text == "Let me say hi."
    assert completion.finish_reason == "tool_calls"


async def test_tool_history_round_trips(server: OpenAITestServer, model: OpenAIChatModel) -> None:
    server.script(tool_call_reply(("speak", {"text": "hi"})), text_reply("done"))
    first = await complete(model, HELLO)
    call = first.message.tool_calls[0]
    follow_up = ChatRequest(messages=(*HELLO.messages, first.message, ChatMessage.tool(call.id, "speak", "spoken")))
    assert (await complete(model, follow_up)).message.text == "done"
    sent = server.chat_requests()[1].body["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {"name": "speak", "arguments": '{"text": "hi"}'}
    assert sent[2] == {"role": "tool", "content": "spoken", "tool_call_id": call.id}


async def test_server_error_is_retried_then_succeeds(server: OpenAITestServer, model: OpenAIChatModel) -> None:
    server.script(error_reply(500), error_reply(503), text_reply("recovered"))
    assert (await complete(model, HELLO)).message.text == "recovered"
    assert len(server.chat_requests()) == 3


async def test_rate_limit_waits_for_retry_after(server: OpenAITestServer) -> None:
    server.script(error_reply(429, "slow down", retry_after=0.2), text_reply("ok"))
    m = build_chat_model(server.base_url, "test-model", KEY, retry=RetryPolicy(base_delay_s=0.01, max_delay_s=1.0))
    started = time.monotonic()
    assert (await complete(m, HELLO)).message.text == "ok"
    await m.aclose()
    assert time.monotonic() - started >= 0.2
    assert len(server.chat_requests()) == 2


async def test_retries_are_bounded(server: OpenAITestServer) -> None:
    server.script(*[error_reply(500, "boom")] * 3)
    m = build_chat_model(server.base_url, "test-model", KEY, retry=RetryPolicy(max_retries=2, base_delay_s=0.01))
    with pytest.raises(LLMError) as info:
        await complete(m, HELLO)
    await m.aclose()
    assert info.value.retryable
    assert info.value.status == 500
    assert "server error" in str(info.value)
    assert "boom" in str(info.value)
    assert len(server.chat_requests()) == 3
    assert server.pending == 0


async def test_rejected_key_is_a_clear_permanent_error(server: OpenAITestServer) -> None:
    m = build_chat_model(server.base_url, "test-model", "sk-wrong-key-zzz", retry=FAST)
    with pytest.raises(LLMError) as info:
        await complete(m, HELLO)
    await m.aclose()
    assert info.value.status == 401
    assert not info.value.retryable
    assert "API key" in str(info.value)
    assert "sk-wrong-key-zzz" not in str(info.value)
    assert len(server.chat_requests()) == 1  # no retry


async def test_unknown_model_says_so(server: OpenAITestServer) -> None:
    m = build_chat_model(server.base_url, "no-such-model", KEY, retry=FAST)
    with pytest.raises(LLMError, match="unknown model 'no-such-model'") as info:
        await complete(m, HELLO)
    await m.aclose()
    assert info.value.status == 404
    assert "/v1" in str(info.value)


async def test_unreachable_server_says_so() -> None:
    m = build_chat_model("http://127.0.0.1:9/v1", "m", KEY, retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
    with pytest.raises(LLMError, match=r"cannot reach http://127\.0\.0\.1:9/v1") as info:
        await complete(m, HELLO)
    await m.aclose()
    assert info.value.retryable


def test_bad_settings_are_rejected_before_any_call() -> None:
    with pytest.raises(LLMError, match="http"):
        build_chat_model("localhost:11434", "m")
    with pytest.raises(LLMError, match="model"):
        build_chat_model("http://127.0.0.1:11434/v1", " ")


async def test_cancelling_the_consumer_stops_the_http_stream(server: OpenAITestServer, model: OpenAIChatModel) -> None:
    server.script(stall_reply("partial "))
    first_delta = asyncio.Event()
    seen: list[str] = []

    async def consume() -> None:
        async for event in model.stream(HELLO):
            if isinstance(event, TextDelta):
                seen.append(event.text)
                first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 5)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1.0)
    await asyncio.wait_for(server.client_gone.wait(), 1.0)  # the server saw the connection close
    assert time.monotonic() - started < 1.0
    assert seen == ["partial "]


async def test_cancelling_before_the_server_answered_closes_the_connection(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    server.script(stall_reply(before_headers=True))
    task = asyncio.create_task(complete(model, HELLO))
    await server.wait_for_requests(1)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1.0)
    await asyncio.wait_for(server.client_gone.wait(), 1.0)
    assert time.monotonic() - started < 1.0


async def test_stalled_server_times_out_and_partial_output_is_not_retried(server: OpenAITestServer) -> None:
    server.script(stall_reply("Hel"))
    m = build_chat_model(server.base_url, "test-model", KEY, timeout_s=0.3, retry=FAST)
    deltas: list[str] = []

    async def consume() -> None:
        async for event in m.stream(HELLO):
            if isinstance(event, TextDelta):
                deltas.append(event.text)

    with pytest.raises(LLMError, match="timed out") as info:
        await consume()
    await m.aclose()
    assert info.value.retryable
    assert deltas == ["Hel"]
    assert len(server.chat_requests()) == 1  # a retry would have repeated "Hel" to the consumer


async def test_api_key_never_appears_in_logs_errors_or_reprs(
    server: OpenAITestServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.api_key = "sk-other"  # every call is rejected, so the key is in play on every path
    m = build_chat_model(server.base_url, "test-model", KEY, retry=FAST)
    errors: list[str] = []
    with pytest.raises(LLMError) as info:
        await complete(m, HELLO)
    errors.append(str(info.value) + repr(info.value))
    server.api_key = KEY
    server.script(error_reply(500, f"echoing your key {KEY}"), text_reply("fine"))
    assert (await complete(m, HELLO)).message.text == "fine"
    server.script(*[error_reply(500, f"again {KEY}")] * 4)
    with pytest.raises(LLMError) as info:
        await complete(m, HELLO)
    errors.append(str(info.value) + repr(info.value))
    await m.aclose()
    assert "Bearer " + KEY in server.requests[-1].headers["authorization"]  # it was really sent
    assert caplog.records, "the retries should have been logged"
    for text in [caplog.text, *errors, repr(m), str(vars(m).get("_key") is not None)]:
        assert KEY not in text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"data: {not json\n\n", "not a chat stream"),
        (b'data: {"choices": 5}\n\n', "not a chat stream"),
        (b"<html>a web page</html>", "no chat completion chunks"),
    ],
)
async def test_a_server_that_is_not_openai_is_a_clear_error(body: bytes, expected: str) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        writer.write(head + body)
        await writer.drain()
        writer.close()

    web = await asyncio.start_server(handle, "127.0.0.1", 0)
    m = build_chat_model(f"http://127.0.0.1:{web.sockets[0].getsockname()[1]}/v1", "m", KEY, retry=FAST)
    try:
        with pytest.raises(LLMError, match=expected):
            await complete(m, HELLO)
    finally:
        await m.aclose()
        web.close()
