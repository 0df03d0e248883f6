"""Finding a local model server: only real OpenAI model lists count; nothing found is a clear message."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from companions.llm.detect import (
    OPENAI_BASE_URL,
    Candidate,
    DetectedServer,
    NoServer,
    detect_local_server,
    pick_default_model,
    resolve_chat_model,
)
from companions.llm.types import ChatMessage, ChatRequest, complete
from companions.testing.openai_server import OpenAITestServer, text_reply
from tests.conftest import free_port


def closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


@contextlib.asynccontextmanager
async def plain_http_server(status: str, content_type: str, body: bytes, *, hang: bool = False) -> AsyncIterator[str]:
    """A web server that is not an OpenAI server; yields its /v1 base URL."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            if hang:
                await reader.read()
            head = f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n"
            writer.write(head.encode() + body)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1)


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(models=["nomic-embed-text", "llama3.2:3b", "qwen2.5:7b"]) as s:
        yield s


async def test_finds_the_server_that_answers_like_openai(server: OpenAITestServer) -> None:
    found = await detect_local_server([Candidate("Ollama", closed_port_url()), Candidate("LM Studio", server.base_url)])
    assert isinstance(found, DetectedServer)
    assert found.kind == "LM Studio"
    assert found.base_url == server.base_url
    assert found.models == ("nomic-embed-text", "llama3.2:3b", "qwen2.5:7b")
    assert found.default_model == "llama3.2:3b"  # not the embedding model


async def test_list_order_decides_when_several_answer(server: OpenAITestServer) -> None:
    async with OpenAITestServer(models=["other"]) as second:
        found = await detect_local_server([Candidate("first", server.base_url), Candidate("second", second.base_url)])
    assert isinstance(found, DetectedServer)
    assert found.kind == "first"


async def test_non_openai_servers_are_not_mistaken_for_one() -> None:
    async with (
        plain_http_server("426 Upgrade Required", "text/plain", b"Failed to open a WebSocket connection.\n") as ws,
        plain_http_server("200 OK", "text/html", b"<html>hello</html>") as html,
        plain_http_server("200 OK", "application/json", b'{"status": "ok"}') as other_json,
        plain_http_server("200 OK", "application/json", b'{"object": "list", "data": []}') as empty,
    ):
        candidates = [Candidate(n, u) for n, u in [("ws", ws), ("html", html), ("json", other_json), ("empty", empty)]]
        found = await detect_local_server(candidates)
    assert isinstance(found, NoServer)
    assert "Install Ollama" in found.message
    assert "Settings" in found.message
    assert ws in found.message


async def test_a_silent_server_costs_only_the_timeout() -> None:
    async with plain_http_server("200 OK", "application/json", b"{}", hang=True) as silent:
        started = time.monotonic()
        found = await detect_local_server(
            [Candidate("silent", silent), Candidate("none", closed_port_url())], timeout_s=0.3
        )
        elapsed = time.monotonic() - started
    assert isinstance(found, NoServer)
    assert elapsed < 1.5


def test_default_model_choice() -> None:
    assert pick_default_model(["text-embedding-3-small", "gpt-4o-mini"]) == "gpt-4o-mini"
    assert pick_default_model(["only-embed"]) == "only-embed"


async def test_resolve_uses_the_configured_server_and_asks_it_for_a_model(server: OpenAITestServer) -> None:
    resolution = await resolve_chat_model(server.base_url, None, None, autodetect=False)
    assert resolution.source == "settings"
    assert resolution.model is not None
    assert resolution.model.name == "llama3.2:3b"
    server.script(text_reply("hi"))
    assert (await complete(resolution.model, ChatRequest(messages=(ChatMessage.user("x"),)))).message.text == "hi"
    await resolution.model.aclose()


async def test_resolve_detects_when_nothing_is_configured(server: OpenAITestServer) -> None:
    resolution = await resolve_chat_model(None, None, None, candidates=[Candidate("Ollama", server.base_url)])
    assert resolution.source == "detected"
    assert resolution.model is not None
    assert resolution.model.base_url == server.base_url
    assert "Ollama" in resolution.message
    await resolution.model.aclose()


async def test_resolve_says_what_to_configure() -> None:
    nothing = await resolve_chat_model(None, None, None, candidates=[Candidate("Ollama", closed_port_url())])
    assert nothing.model is None
    assert "Install Ollama" in nothing.message
    off = await resolve_chat_model(None, None, None, autodetect=False)
    assert off.model is None
    assert "Settings" in off.message
    broken = await resolve_chat_model("http://127.0.0.1:1/v1", None, "sk-abc", autodetect=False)
    assert broken.model is None
    assert "cannot be used" in broken.message
    assert "cannot reach http://127.0.0.1:1/v1" in broken.message
    assert "sk-abc" not in broken.message


async def test_resolve_with_only_a_key_means_openai() -> None:
    resolution = await resolve_chat_model(None, None, "sk-only-a-key", autodetect=False)
    assert resolution.model is not None
    assert resolution.model.base_url == OPENAI_BASE_URL
    assert resolution.model.name == "gpt-4o-mini"
    assert "sk-only-a-key" not in repr(resolution)
    await resolution.model.aclose()
