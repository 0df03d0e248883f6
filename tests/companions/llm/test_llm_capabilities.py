"""What an endpoint can do and how fast it is: the concurrency gate, cut-off streams, the probe, speed."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections.abc import AsyncIterator
from typing import Literal

import openai
import pytest
from pydantic import BaseModel

from companions.llm.capabilities import capabilities_of, endpoint_capabilities, estimate_tokens
from companions.llm.gate import ConcurrencyGate
from companions.llm.openai_backend import OpenAIChatModel, RetryPolicy, build_chat_model
from companions.llm.scripted import ScriptedModel, say
from companions.llm.server_probe import ServerIdentity, probe_server
from companions.llm.structured import generate_structured
from companions.llm.types import ChatMessage, ChatRequest, complete
from companions.testing.openai_server import OpenAITestServer, text_reply
from companions.testing.openai_server.profiles import PROFILES
from tests.waiting import wait_until

pytestmark = pytest.mark.usefixtures("fresh_endpoints")

FAST = RetryPolicy(max_retries=1, base_delay_s=0.01)
ASK = [ChatMessage.system("Vote."), ChatMessage.user("Do you want to speak?")]
SPEAK = {"state": "speak", "importance": 7}


class Vote(BaseModel):
    state: Literal["speak", "listen"]
    importance: int


DEFAULT = Vote(state="listen", importance=0)


@pytest.fixture
async def model(server: OpenAITestServer) -> AsyncIterator[OpenAIChatModel]:
    m = build_chat_model(server.base_url, "test-model", retry=FAST, timeout_s=5)
    yield m
    await m.aclose()


# -- the gate ----------------------------------------------------------------------------------------------------


async def test_gate_lets_higher_priority_in_first_then_arrival_order() -> None:
    gate = ConcurrencyGate(1)
    order: list[str] = []

    async def use(name: str, priority: int) -> None:
        async with gate.slot(priority):
            order.append(name)

    async with gate.slot():
        tasks = [asyncio.create_task(use(n, p)) for n, p in [("vote-a", 0), ("vote-b", 0), ("reply", 5)]]
        await wait_until(lambda: gate.waiting == 3, every=0)
    await asyncio.gather(*tasks)
    assert order == ["reply", "vote-a", "vote-b"]
    assert gate.active == 0


async def test_gate_survives_cancelled_waiters_and_a_raised_limit() -> None:
    gate = ConcurrencyGate(1)
    entered = asyncio.Event()

    async def use() -> None:
        async with gate.slot():
            entered.set()

    async with gate.slot():
        gone = asyncio.create_task(use())
        await wait_until(lambda: gate.waiting == 1, every=0)
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        kept = asyncio.create_task(use())
        await wait_until(lambda: gate.waiting == 1, every=0)
        gate.set_limit(None)  # e.g. the probe found a parallel server: the waiter goes in at once
        await asyncio.wait_for(entered.wait(), 5)
    await kept
    assert (gate.active, gate.waiting) == (0, 0)


async def test_gate_is_shared_across_threads_and_loops() -> None:
    gate = ConcurrencyGate(1)
    holding, release = threading.Event(), threading.Event()

    def other_thread() -> None:
        async def hold() -> None:
            async with gate.slot():
                holding.set()
                await asyncio.to_thread(release.wait)

        asyncio.run(hold())

    thread = threading.Thread(target=other_thread)
    thread.start()
    await asyncio.to_thread(holding.wait)
    entered, done = asyncio.Event(), asyncio.Event()

    async def use() -> None:
        async with gate.slot():
            entered.set()
            await done.wait()

    waiter = asyncio.create_task(use())
    await wait_until(lambda: gate.waiting == 1, every=0)
    assert not entered.is_set()
    release.set()
    await asyncio.wait_for(entered.wait(), 5)  # woken from the other thread's loop
    assert gate.active == 1
    done.set()
    await waiter
    await asyncio.to_thread(thread.join)
    assert gate.active == 0


# -- the backend's gate --------------------------------------------------------------------------------------------


async def test_a_local_server_gets_one_request_at_a_time_and_the_reply_goes_before_votes(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    caps = model.capabilities
    assert caps.claim_probe()  # as if probed already: no probe requests in this test
    assert caps.slots == 1  # a local server nobody recognised

    async def ask(text: str, priority: int) -> str:
        request = ChatRequest(messages=(ChatMessage.user(text),), priority=priority)
        return (await complete(model, request)).message.text

    server.script(text_reply("first"), text_reply("second"), text_reply("third"))
    async with caps.gate.slot():
        votes = [asyncio.create_task(ask(f"vote {i}", 0)) for i in range(2)]
        await wait_until(lambda: caps.gate.waiting == 2, every=0)
        reply = asyncio.create_task(ask("reply", 10))
        await wait_until(lambda: caps.gate.waiting == 3, every=0)
        assert server.chat_requests() == []  # all held back by the gate
    assert await reply == "first"
    assert [await v for v in votes] == ["second", "third"]
    assert [r.body["messages"][0]["content"] for r in server.chat_requests()] == ["reply", "vote 0", "vote 1"]


async def test_a_stream_cut_off_by_the_server_is_retried_once_and_the_gate_closes_to_one(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    caps = model.capabilities
    caps.claim_probe()
    caps.learn_server(ServerIdentity("vLLM", None))  # a server that said it runs requests in parallel
    server.script(text_reply("ok"), text_reply('{"state": "sp', finish_reason=""), text_reply(json.dumps(SPEAK)))
    await complete(model, ChatRequest(messages=(ChatMessage.user("hi"),)))  # it does send finish reasons
    assert await generate_structured(model, ASK, Vote, default=DEFAULT, name="vote") == Vote(**SPEAK)
    cut, retried = (r.body["messages"] for r in server.chat_requests()[1:])
    assert retried == cut  # the same request again, not a repair
    assert caps.slots == 1
    server.assert_used_up()


async def test_a_cut_off_plain_reply_already_shown_is_not_repeated(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    model.capabilities.claim_probe()
    server.script(text_reply("ok"), text_reply("Hello the", chunks=["Hello ", "the"], finish_reason=""))
    await complete(model, ChatRequest(messages=(ChatMessage.user("hi"),)))
    events = [e async for e in model.stream(ChatRequest(messages=(ChatMessage.user("hi"),)))]
    completion = events[-1]
    assert completion.type == "completion"
    assert completion.message.text == "Hello the"
    assert completion.finish_reason == "length"
    assert len(server.chat_requests()) == 2


# -- the probe -----------------------------------------------------------------------------------------------------


async def serve_json(routes: dict[str, object]) -> tuple[asyncio.Server, str]:
    """A minimal HTTP server answering GET ``routes`` with JSON (404 otherwise); returns it and its /v1 URL."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        path = (await reader.readline()).split(b" ")[1].decode()
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        found = path in routes
        body = json.dumps(routes[path] if found else {"detail": "Not Found"}).encode()
        status = b"200 OK" if found else b"404 Not Found"
        writer.write(b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\ncontent-length: "
                     + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
        await writer.drain()
        writer.close()

    web = await asyncio.start_server(handle, "127.0.0.1", 0)
    return web, f"http://127.0.0.1:{web.sockets[0].getsockname()[1]}/v1"


@pytest.mark.parametrize(
    ("routes", "kind", "slots"),
    [
        ({"/props": {"total_slots": 4}}, "llama.cpp", 4),
        ({"/v1/models": {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "me"}]}},
         "llama-cpp-python", 1),
        ({"/v1/models": {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm"}]}},
         "vLLM", None),
        ({}, None, 1),
    ],
)
async def test_the_probe_tells_servers_and_their_slots_apart(
    routes: dict[str, object], kind: str | None, slots: int | None
) -> None:
    web, base_url = await serve_json(routes)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
    try:
        facts = await probe_server(client, base_url)
    finally:
        await client.close()
        web.close()
    assert (facts.kind, facts.slots) == (kind, slots)


async def test_the_first_request_probes_once_and_applies_the_slots(server: OpenAITestServer) -> None:
    caps = endpoint_capabilities(server.base_url, "test-model")
    server.script(text_reply("a"), text_reply("b"))
    m = build_chat_model(server.base_url, "test-model", retry=FAST)
    await complete(m, ChatRequest(messages=(ChatMessage.user("hi"),)))
    await complete(m, ChatRequest(messages=(ChatMessage.user("hi"),)))
    await m.aclose()
    probes = [r.path for r in server.requests if r.method == "GET"]
    assert probes == ["/v1/models"]  # once, before the first chat request: the owner names the server
    assert server.requests[1].path.endswith("/chat/completions")
    assert caps.slots == 1  # the test server may play any server: one at a time
    assert caps.server_kind == "Madoi test server"


def test_a_hosted_api_is_not_probed_and_runs_in_parallel() -> None:
    caps = endpoint_capabilities("https://api.openai.com/v1", "gpt-4o-mini")
    assert caps.slots is None
    assert not caps.claim_probe()
    assert endpoint_capabilities("https://api.openai.com/v1/", "gpt-4o-mini") is caps
    assert endpoint_capabilities("https://api.openai.com/v1", "other") is not caps


# -- speed ---------------------------------------------------------------------------------------------------------


async def test_speed_is_measured_per_endpoint_and_gives_an_estimate(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    words = [f"word{i} " for i in range(30)]
    server.script(*[text_reply("".join(words), chunks=words)] * 2)
    assert model.capabilities.estimate_s(400, 160) is None  # nothing measured yet
    for _ in range(2):
        await complete(model, ChatRequest(messages=(ChatMessage.user("tell me more"),)))
    caps = capabilities_of(model)
    assert caps is not None
    assert caps.samples == 2
    assert caps.ttft_s is not None
    assert caps.ttft_s > 0
    assert caps.gen_tps is not None
    assert caps.gen_tps > 0
    short, long = caps.estimate_s(400, 50), caps.estimate_s(400, 500)
    assert short is not None
    assert long is not None
    assert 0 < short < long
    assert server.chat_requests()[0].body["stream_options"] == {"include_usage": True}


async def test_the_speed_of_reading_new_prompt_tokens_is_kept_apart_from_the_prompt_cache() -> None:
    # llama-cpp-python's server caches the prompt before: a companion's second request reads only its new message.
    profile = dataclasses.replace(PROFILES["llama-cpp-python"], time_scale=0.1)  # 1,700 new tokens/s
    persona = ChatMessage.system("You are Akari, who loves the stars. " * 100)  # ~900 tokens
    async with OpenAITestServer(profile=profile) as server:
        model = build_chat_model(server.base_url, "test-model", retry=FAST, timeout_s=5)
        server.script(*[text_reply("Yes!")] * 4)
        for turn in range(4):
            await complete(model, ChatRequest(messages=(persona, ChatMessage.user(f"Shall we look, {turn}?"))))
        await model.aclose()
    caps = model.capabilities
    assert caps.samples == 4
    assert caps.cold_prompt_tps is not None
    assert caps.prompt_tps is not None
    read = profile.prompt_tps / profile.time_scale  # type: ignore[operator]
    assert 0.3 * read < caps.cold_prompt_tps < 1.2 * read  # the first request, read whole (and its fixed cost)
    assert caps.prompt_tps > 2 * caps.cold_prompt_tps  # whole prompts, mostly cached: they look faster
    bound, estimate = caps.bound_s(900, 0), caps.estimate_s(900, 0)
    assert bound is not None
    assert estimate is not None
    assert bound > 2 * estimate  # a prompt the cache does not hold: the deadline's measure


def test_models_without_an_endpoint_have_no_capabilities() -> None:
    assert capabilities_of(ScriptedModel("s", say("hi"))) is None


def test_token_estimate_counts_japanese_characters_and_english_words() -> None:
    assert estimate_tokens("こんにちは") == 5
    assert estimate_tokens("hello there, friend") == 5
