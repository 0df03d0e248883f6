"""The OpenAI-compatible test server itself, seen by the raw ``openai`` client: it must pass for the real thing."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import openai
import pytest

from companions.testing.openai_server import OpenAITestServer, echo_reply, text_reply, tool_call_reply


async def test_non_streaming_completion_and_model_list() -> None:
    async with OpenAITestServer(models=["m1", "m2"]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        server.script(text_reply("plain"), tool_call_reply(("speak", {"text": "hi"})))
        first = await client.chat.completions.create(model="m1", messages=[{"role": "user", "content": "a"}])
        second = await client.chat.completions.create(model="m2", messages=[{"role": "user", "content": "b"}])
        models = [m.id async for m in client.models.list()]
        await client.close()
        server.assert_used_up()
    assert first.choices[0].message.content == "plain"
    calls = second.choices[0].message.tool_calls
    assert calls is not None
    assert calls[0].type == "function"
    assert calls[0].function.name == "speak"
    assert second.choices[0].finish_reason == "tool_calls"
    assert models == ["m1", "m2"]


async def test_unscripted_requests_fail_and_are_reported() -> None:
    async with OpenAITestServer() as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="no scripted reply left"):
            await client.chat.completions.create(model="test-model", messages=[{"role": "user", "content": "?"}])
        await client.close()
        with pytest.raises(AssertionError, match="1 unexpected"):
            server.assert_used_up()


async def test_echo_fallback_streams_word_by_word() -> None:
    async with OpenAITestServer(fallback=echo_reply) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        stream = await client.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "good morning all"}], stream=True
        )
        pieces = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
        await client.close()
    assert pieces == ["You ", "said: ", "good ", "morning ", "all"]


async def test_it_runs_standalone_for_demos() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "companions.testing.openai_server", "--port", "0", "--model", "demo",
        stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
        base_url = line.split(" at ", 1)[1].split(" ", 1)[0]
        client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
        reply = await client.chat.completions.create(model="demo", messages=[{"role": "user", "content": "hi"}])
        await client.close()
        assert reply.choices[0].message.content == "You said: hi"
    finally:
        process.terminate()
        await process.wait()
