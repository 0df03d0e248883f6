"""Knowing the server before the user speaks (companions/llm/learning.py): identified with GETs, what is known of it
taken without asking, what is not asked with the smallest request, all kept in a real file across restarts, and a
changed server learned again."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from companions.conversation.ballot import Vote
from companions.llm.capabilities import forget_endpoints
from companions.llm.learning import FILE_NAME, LearnedEndpoints, keep_learned, learn_endpoint
from companions.llm.openai_backend import OpenAIChatModel, RetryPolicy, build_chat_model
from companions.llm.structured import generate_structured
from companions.llm.types import ChatMessage, ChatRequest, complete
from companions.testing.openai_server import (
    PROFILES,
    OpenAITestServer,
    Refusal,
    ServerProfile,
    stall_reply,
    text_reply,
    tool_call_reply,
)
from tests.waiting import wait_until

FAST = RetryPolicy(max_retries=1, base_delay_s=0.01, max_delay_s=0.02)
SCALE = 0.02


@pytest.fixture(autouse=True)
def _fresh() -> None:
    forget_endpoints()  # what an earlier test's server taught must not leak through a reused port


@pytest.fixture
async def llama_cpp_python() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(models=["qwen"], profile=PROFILES["llama-cpp-python"].scaled(SCALE)) as server:
        yield server


def model_of(server: OpenAITestServer, name: str = "qwen") -> OpenAIChatModel:
    return build_chat_model(server.base_url, name, retry=FAST)


def chat(server: OpenAITestServer) -> list[str]:
    """What the server was asked to complete: ``<kind> <response_format type or tools>`` per request."""
    out = []
    for request in server.chat_requests():
        body = request.body
        shape = (body.get("response_format") or {}).get("type") or ("tools" if body.get("tools") else "text")
        out.append(f"{shape} max_tokens={body.get('max_tokens')} -> {request.timing.status}")
    return out


@pytest.mark.parametrize(
    ("profile", "kind", "version", "slots"),
    [
        ("llama-cpp-python", "llama-cpp-python", "0.3.36", 1),
        ("llama-cpp-python-functions", "llama-cpp-python", "0.3.36", 1),
        ("ollama", "Ollama", "0.6.2", 1),
        ("llama-server", "llama.cpp", "b5298-5b8fa4f7", 4),
        ("vllm", "vLLM", "0.6.3", None),
        ("lmstudio", "LM Studio", None, 1),
    ],
)
async def test_each_server_is_told_apart_with_gets_and_no_completion(
        profile: str, kind: str, version: str | None, slots: int | None) -> None:
    async with OpenAITestServer(models=["qwen"], profile=PROFILES[profile].scaled(SCALE)) as server:
        model = model_of(server)
        identity = await model.identify(priority=0)
        await model.aclose()
        assert identity is not None
        assert (identity.kind, identity.version, identity.slots) == (kind, version, slots)
        assert server.chat_requests() == []
        assert model.capabilities.slots == slots


async def test_a_known_server_is_learned_without_a_single_completion(llama_cpp_python: OpenAITestServer,
                                                                     tmp_path: Path) -> None:
    model = model_of(llama_cpp_python)
    store = LearnedEndpoints(tmp_path / FILE_NAME)
    outcome = await learn_endpoint(model, store)
    assert "llama-cpp-python 0.3.36" in outcome
    assert chat(llama_cpp_python) == []
    caps = model.capabilities
    assert (caps.structured_mode, caps.mode_confirmed, caps.tools_as_text) == ("json_object", True, True)
    # The user's first structured request goes straight to the mode that works: no HTTP 500 spent learning it.
    llama_cpp_python.script(text_reply('{"state": "speak", "importance": 5, "reason": "hi"}'))
    vote = await generate_structured(model, [ChatMessage.user("vote")], Vote,
                                     default=Vote(state="listen", importance=0), name="vote")
    await model.aclose()
    assert vote.state == "speak"
    assert chat(llama_cpp_python) == ["json_object max_tokens=160 -> 200"]
    kept = json.loads((tmp_path / FILE_NAME).read_text())
    assert kept["endpoints"][0]["server"] == "llama-cpp-python"
    assert kept["endpoints"][0]["structured_mode"] == "json_object"
    assert (tmp_path / FILE_NAME).stat().st_mode & 0o077 == 0  # the user's own file


UNKNOWN = ServerProfile(owned_by="someone", slots=1, tools="text",
                        refuses={"json_schema": Refusal(400, {"error": "response_format json_schema unsupported"})})


async def test_an_unknown_server_is_asked_only_the_smallest_questions(tmp_path: Path) -> None:
    async with OpenAITestServer(models=["m"], profile=UNKNOWN) as server:
        server.script(text_reply("Hello!"))  # the tool probe: this server's model writes no tool call
        model = model_of(server, "m")
        await learn_endpoint(model, LearnedEndpoints(tmp_path / FILE_NAME))
        await model.aclose()
        # one token asks whether json_schema works (refused before generating), then json_object (accepted);
        # one short request offering the speak tool
        assert chat(server) == ["json_schema max_tokens=1 -> 400", "json_object max_tokens=1 -> 200",
                                "tools max_tokens=32 -> 200"]
        server.assert_used_up()
        caps = model.capabilities
        assert (caps.structured_mode, caps.mode_confirmed, caps.tools_as_text) == ("json_object", True, True)
        gets = [r.path for r in server.requests if r.method == "GET"]
        assert gets[0] == "/v1/models"
        assert sorted(gets[1:]) == ["/api/version", "/openapi.json", "/props", "/version"]


async def test_a_second_start_knows_at_once_and_a_changed_server_is_learned_again(tmp_path: Path) -> None:
    file = tmp_path / FILE_NAME
    async with OpenAITestServer(models=["m"], profile=UNKNOWN) as server:
        server.script(text_reply("Hello!"))
        first = model_of(server, "m")
        await learn_endpoint(first, LearnedEndpoints(file))
        first.capabilities.record(prompt_tokens=400, ttft_s=2.0, completion_tokens=41, generation_s=1.0,
                                  prompt_text="user: the stars")
        first.capabilities.record(prompt_tokens=400, ttft_s=0.5, completion_tokens=41, generation_s=1.0,
                                  prompt_text="user: the stars!")  # cached but for its last token
        await keep_learned([first], LearnedEndpoints(file))
        measured, bound = first.capabilities.estimate_s(400, 40), first.capabilities.bound_s(400, 40)
        await first.aclose()
        asked = len(server.chat_requests())
        forget_endpoints()  # a new process: nothing in memory, only the file
        second = model_of(server, "m")
        outcome = await learn_endpoint(second, LearnedEndpoints(file))
        await second.aclose()
        assert "known from an earlier start" in outcome
        assert len(server.chat_requests()) == asked  # no completion at all
        caps = second.capabilities
        assert (caps.structured_mode, caps.tools_as_text) == ("json_object", True)
        assert caps.estimate_s(400, 40) == pytest.approx(measured)  # the speed, as measured last time
        assert caps.bound_s(400, 40) == pytest.approx(bound)  # and of a prompt the cache does not hold
        assert bound is not None
        assert measured is not None
        assert bound > measured
        port = server.port
    # The same address and model name, another server (a newer version of it): learned again.
    changed = dataclasses.replace(UNKNOWN, refuses={}, tools="native",
                                  identity={"/version": {"version": "0.7.0"}})
    async with OpenAITestServer(models=["m"], profile=changed, port=port) as server:
        server.script(tool_call_reply(("speak", {"message": "Hello!"})))
        forget_endpoints()
        third = model_of(server, "m")
        outcome = await learn_endpoint(third, LearnedEndpoints(file))
        await third.aclose()
        assert "known from an earlier start" not in outcome
        # now it says it is vLLM 0.7.0: json_schema is known for it, its tool calls are asked about again
        assert chat(server) == ["tools max_tokens=32 -> 200"]
        assert third.capabilities.server_kind == "vLLM"
        assert (third.capabilities.structured_mode, third.capabilities.tools_as_text) == ("json_schema", False)


async def test_a_second_start_knows_the_server_while_it_still_runs_the_stopped_apps_request(
        llama_cpp_python: OpenAITestServer, tmp_path: Path) -> None:
    # measured on the real llama-cpp-python (tests/realmodel/test_real_first_contact.py): it answers GET /v1/models
    # only once the request it runs ends; at a second start it still ran what the stopped Madoi had asked, the
    # listing timed out, and the server with "no models" was taken for another: its speed was learned again
    import asyncio

    import openai

    file = tmp_path / FILE_NAME
    first = model_of(llama_cpp_python)
    await learn_endpoint(first, LearnedEndpoints(file))
    first.capabilities.record(prompt_tokens=400, ttft_s=2.0, completion_tokens=41, generation_s=1.0)
    await keep_learned([first], LearnedEndpoints(file))
    await first.aclose()
    llama_cpp_python.script(stall_reply())  # the stopped app's request, still evaluated: it holds the one slot
    client = openai.AsyncOpenAI(base_url=llama_cpp_python.base_url, api_key="x", max_retries=0)
    leftover = asyncio.create_task(client.chat.completions.create(
        model="qwen", messages=[{"role": "user", "content": "..."}], stream=True))
    await wait_until(llama_cpp_python.chat_requests, "the leftover request reached the server")
    forget_endpoints()  # a new process: only the file remembers
    second = model_of(llama_cpp_python)
    try:
        outcome = await learn_endpoint(second, LearnedEndpoints(file))
        assert "known from an earlier start" in outcome
        assert second.capabilities.samples > 0  # the speed, as measured last time
    finally:
        leftover.cancel()
        await asyncio.gather(leftover, return_exceptions=True)
        await client.close()
        await second.aclose()


async def test_a_running_app_notices_a_changed_server_when_it_looks_again(tmp_path: Path) -> None:
    async with OpenAITestServer(models=["qwen"], profile=PROFILES["llama-cpp-python"].scaled(SCALE)) as server:
        model = model_of(server)
        await learn_endpoint(model, LearnedEndpoints(None))
        caps = model.capabilities
        caps.record(prompt_tokens=400, ttft_s=2.0, completion_tokens=41, generation_s=1.0)
        port = server.port
    ollama = PROFILES["ollama"].scaled(SCALE)
    async with OpenAITestServer(models=["qwen"], profile=ollama, port=port):
        await learn_endpoint(model, LearnedEndpoints(None))  # Check again, after the user started Ollama there
        await model.aclose()
    assert caps.server_kind == "Ollama"
    assert (caps.structured_mode, caps.tools_as_text) == ("json_schema", False)
    assert caps.samples == 0  # the old server's speed says nothing of this one


@pytest.mark.parametrize("content", ["{not json", json.dumps({"version": 1, "endpoints": [{"base_url": 3}]}),
                                     json.dumps({"version": 99, "endpoints": []})])
async def test_a_broken_file_is_learned_again(llama_cpp_python: OpenAITestServer, tmp_path: Path,
                                              content: str) -> None:
    file = tmp_path / FILE_NAME
    file.write_text(content)
    model = model_of(llama_cpp_python)
    outcome = await learn_endpoint(model, LearnedEndpoints(file))
    await model.aclose()
    assert "llama-cpp-python" in outcome
    assert json.loads(file.read_text())["endpoints"][0]["server"] == "llama-cpp-python"


async def test_a_turn_goes_before_the_learning_requests(tmp_path: Path) -> None:
    slow = dataclasses.replace(UNKNOWN, prompt_tps=200.0, gen_tps=50.0)
    async with OpenAITestServer(models=["m"], profile=slow.scaled(0.2)) as server:
        server.script(text_reply("Hello!"), text_reply("やあ！"))
        model = model_of(server, "m")
        import asyncio

        learning = asyncio.create_task(learn_endpoint(model, LearnedEndpoints(None)))
        await server.wait_for_requests(1)  # the first one-token question is being answered
        turn = await complete(model, ChatRequest(messages=(ChatMessage.user("こんばんは"),), priority=1))
        await learning
        await model.aclose()
    assert turn.message.text == "Hello!"  # the turn took the first scripted reply: it went before the tool probe
    kinds = chat(server)
    assert kinds.index("text max_tokens=512 -> 200") < kinds.index("tools max_tokens=32 -> 200")
    assert model.capabilities.tools_known
