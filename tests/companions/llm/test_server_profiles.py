"""Server profiles, seen by the real ``openai`` client: the test server queues, interrupts, paces, refuses formats,
drops later system messages and writes tool calls as text the way the real servers do (profiles.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any

import openai
import pytest

from companions.testing.openai_server import (
    PROFILES,
    OpenAITestServer,
    Reply,
    ServerProfile,
    estimate_tokens,
    text_reply,
    tool_call_reply,
)

FAST = 0.05  # every profile 20x faster than the real server
SPEAK = {"type": "function", "function": {
    "name": "speak", "description": "Say a line aloud.",
    "parameters": {"type": "object", "properties": {"message": {"type": "string"}}}}}
LONG = " ".join(f"word{i}" for i in range(120))  # ~180 tokens: ~3.3 s at 55 tokens/s, ~0.16 s at FAST


def client_of(server: OpenAITestServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)


def user(text: str) -> list[Any]:
    return [{"role": "system", "content": "You are Akari (id: akari)."}, {"role": "user", "content": text}]


async def streamed(client: openai.AsyncOpenAI, messages: list[Any], first: asyncio.Event | None = None,
                   **extra: Any) -> tuple[str, str | None]:
    """The streamed text and the finish_reason (None when the stream ended without one)."""
    stream = await client.chat.completions.create(model="test-model", messages=messages, stream=True, **extra)
    text, finish = "", None
    async for chunk in stream:
        if not chunk.choices:
            continue
        text += chunk.choices[0].delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
        if first is not None and text:
            first.set()
    return text, finish


async def test_a_one_slot_server_serves_parallel_requests_one_after_the_other() -> None:
    profile = PROFILES["ollama"].scaled(FAST)
    async with OpenAITestServer(profile=profile) as server:
        server.script(text_reply(LONG), text_reply(LONG))
        client = client_of(server)
        started = time.perf_counter()
        done: list[float] = []

        async def ask(text: str) -> None:
            await streamed(client, user(text))
            done.append(time.perf_counter() - started)

        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(ask("first"))
            tasks.create_task(ask("second"))
        await client.close()
    first, second = server.chat_requests()
    assert first.timing.finished is not None
    assert second.timing.started is not None
    assert second.timing.started >= first.timing.finished  # the second waited for the slot
    assert done[1] >= 1.8 * done[0] * 0.9  # a person waits about twice as long for the second answer
    assert not first.timing.interrupted
    assert not second.timing.interrupted


async def test_parallel_slots_serve_at_once() -> None:
    async with OpenAITestServer(profile=PROFILES["llama-server"].scaled(FAST)) as server:
        server.script(text_reply(LONG), text_reply(LONG))
        client = client_of(server)
        await asyncio.gather(streamed(client, user("first")), streamed(client, user("second")))
        await client.close()
    first, second = server.chat_requests()
    assert first.timing.finished is not None
    assert second.timing.started is not None
    assert second.timing.started < first.timing.finished


async def test_a_new_request_cuts_off_the_streamed_reply_in_flight() -> None:
    async with OpenAITestServer(profile=PROFILES["llama-cpp-python"].scaled(FAST)) as server:
        server.script(text_reply(LONG), text_reply("The second answer."))
        client = client_of(server)
        begun = asyncio.Event()
        first = asyncio.create_task(streamed(client, user("first"), begun))
        await begun.wait()  # the first reply is streaming
        second_text, second_finish = await streamed(client, user("second"))
        first_text, first_finish = await first
        await client.close()
    assert first_finish is None  # cut off: the stream ends with [DONE] and no finish_reason
    assert 0 < len(first_text) < len(LONG)
    assert LONG.startswith(first_text)
    assert (second_text, second_finish) == ("The second answer.", "stop")
    assert [r.timing.interrupted for r in server.chat_requests()] == [True, False]


async def test_parallel_requests_on_an_interrupting_server_leave_only_the_last_answer_whole() -> None:
    """Three votes at once on llama-cpp-python: each waiting request cuts the one in flight after its first chunk,
    so the first two come back empty (local-models.md: "parallel votes came back empty")."""
    async with OpenAITestServer(profile=PROFILES["llama-cpp-python"].scaled(FAST)) as server:
        server.script(*(text_reply('{"state": "speak"}') for _ in range(3)))
        client = client_of(server)
        results = await asyncio.gather(*(streamed(client, user(f"vote {i}")) for i in range(3)))
        await client.close()
    assert sorted(results, key=str) == [("", None), ("", None), ('{"state": "speak"}', "stop")]


async def _elapsed(server: OpenAITestServer, messages: list[Any], reply: Reply) -> float:
    server.script(reply)
    client = client_of(server)
    started = time.perf_counter()
    await streamed(client, messages)
    await client.close()
    return time.perf_counter() - started


async def test_token_rates_and_the_prompt_cache_set_how_long_a_reply_takes() -> None:
    prompt = user("Tell me about the stars tonight. " * 160)  # ~1300 tokens: ~7.7 s at 170 tokens/s
    answer = "The stars are bright tonight. " * 6  # ~45 tokens: ~0.8 s at 55 tokens/s
    async with OpenAITestServer() as plain:
        baseline = await _elapsed(plain, prompt, text_reply(answer))  # the same request with no delays
    profile = dataclasses.replace(PROFILES["llama-cpp-python"], time_scale=0.1)
    async with OpenAITestServer(profile=profile) as server:
        cold = await _elapsed(server, prompt, text_reply(answer))
        warm = await _elapsed(server, prompt, text_reply(answer))  # same prompt: the slot's cache holds it
        cold_record, warm_record = server.chat_requests()
    prompt_tokens = cold_record.timing.prompt_tokens
    expected = (prompt_tokens / profile.prompt_tps + estimate_tokens(answer) / profile.gen_tps) * 0.1  # type: ignore[operator]
    assert 1000 < prompt_tokens < 1600
    assert 0.8 * expected < cold - baseline < 1.5 * expected + 0.1
    assert warm_record.timing.cached_tokens > 0.95 * prompt_tokens
    assert warm < 0.5 * cold  # the cached prompt costs (almost) nothing


@pytest.mark.parametrize(
    ("profile", "kind", "status"),
    [("llama-cpp-python", "json_schema", 500), ("llama-cpp-python-chatml", "json_schema", 500),
     ("lmstudio", "json_object", 400)],
)
async def test_refused_response_formats_get_the_real_status_and_body(profile: str, kind: str, status: int) -> None:
    schema = {"type": "object", "title": "vote", "properties": {"state": {"type": "string"}}}
    formats: dict[str, Any] = {
        "json_schema": {"type": "json_schema", "json_schema": {"name": "vote", "schema": schema}},
        "json_object": {"type": "json_object", "schema": schema},
    }
    other = "json_object" if kind == "json_schema" else "json_schema"
    async with OpenAITestServer(profile=PROFILES[profile].scaled(FAST)) as server:
        server.script(text_reply('{"state": "speak"}'))
        client = client_of(server)
        with pytest.raises(openai.APIStatusError) as refused:
            await client.chat.completions.create(model="test-model", messages=user("vote"),
                                                 response_format=formats[kind])
        accepted = await client.chat.completions.create(model="test-model", messages=user("vote"),
                                                        response_format=formats[other])
        await client.close()
        server.assert_used_up()
    assert refused.value.status_code == status
    assert refused.value.body == PROFILES[profile].refuses[kind].body.get("error", PROFILES[profile].refuses[kind].body)
    assert accepted.choices[0].message.content == '{"state": "speak"}'


async def test_vllm_refuses_auto_tool_choice_but_not_a_named_one() -> None:
    async with OpenAITestServer(profile=PROFILES["vllm"].scaled(FAST)) as server:
        server.script(tool_call_reply(("speak", {"message": "hi"})))
        client = client_of(server)
        with pytest.raises(openai.BadRequestError, match="enable-auto-tool-choice"):
            await client.chat.completions.create(model="test-model", messages=user("hi"), tools=[SPEAK])  # type: ignore[list-item]
        named = await client.chat.completions.create(
            model="test-model", messages=user("hi"), tools=[SPEAK],  # type: ignore[list-item]
            tool_choice={"type": "function", "function": {"name": "speak"}})
        await client.close()
    calls = named.choices[0].message.tool_calls
    assert calls is not None
    assert calls[0].function.name == "speak"


async def test_a_chatml_template_hides_later_system_messages_from_the_model() -> None:
    seen: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> Reply:
        seen.append(body)
        return text_reply("ok")

    messages = [*user("hello"), {"role": "system", "content": "Vote now."}]
    async with OpenAITestServer(profile=PROFILES["llama-cpp-python-chatml"].scaled(FAST), fallback=model) as server:
        client = client_of(server)
        await client.chat.completions.create(model="test-model", messages=messages)
        await client.close()
    assert [m["content"] for m in seen[0]["messages"]] == ["You are Akari (id: akari).", "hello"]
    assert server.chat_requests()[0].body["messages"][-1]["content"] == "Vote now."  # sent, yet never seen


@pytest.mark.parametrize(
    ("profile", "written"),
    [
        (ServerProfile(tools="text"),
         '<tool_call>\n{"name": "speak", "arguments": {"message": "こんばんは"}}\n</tool_call>'),
        (PROFILES["llama-cpp-python-functions"], "functions.speak:"),
        (PROFILES["llama-cpp-python"], "こんばんは"),
        (PROFILES["llama-cpp-python-chatml"], "こんばんは"),
        (ServerProfile(tools="echo_schema"), f"<tools>\n{json.dumps(SPEAK, ensure_ascii=False)}\n</tools>"),
    ],
    ids=["text", "functions_text", "plain", "plain_chatml", "echo_schema"],
)
async def test_tool_calls_come_out_as_the_server_writes_them(profile: ServerProfile, written: str) -> None:
    async with OpenAITestServer(profile=profile.scaled(FAST)) as server:
        server.script(tool_call_reply(("speak", {"message": "こんばんは"})),
                      tool_call_reply(("speak", {"message": "やあ"})))
        client = client_of(server)
        text, finish = await streamed(client, user("hi"), tools=[SPEAK])
        named = await client.chat.completions.create(
            model="test-model", messages=user("hi"), tools=[SPEAK],  # type: ignore[list-item]
            tool_choice={"type": "function", "function": {"name": "speak"}})
        await client.close()
    assert (text, finish) == (written, "stop")
    calls = named.choices[0].message.tool_calls  # a named tool_choice still gets a real call
    assert calls is not None
    assert json.loads(calls[0].function.arguments) == {"message": "やあ"}


async def test_max_tokens_cuts_the_reply_with_finish_reason_length() -> None:
    async with OpenAITestServer(profile=PROFILES["llama-server"].scaled(FAST)) as server:
        server.script(text_reply("今日は星がとてもきれいに見えるね。"), tool_call_reply(("speak", {"message": LONG})))
        client = client_of(server)
        text, finish = await streamed(client, user("hi"), max_tokens=5)
        cut = await client.chat.completions.create(model="test-model", messages=user("hi"), tools=[SPEAK],  # type: ignore[list-item]
                                                   max_tokens=10)
        await client.close()
    assert (text, finish) == ("今日は星が", "length")
    assert cut.choices[0].finish_reason == "length"
    calls = cut.choices[0].message.tool_calls
    assert calls is not None
    assert estimate_tokens(calls[0].function.arguments) == 10
