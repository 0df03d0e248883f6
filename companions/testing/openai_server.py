"""A real OpenAI-compatible HTTP server on loopback, scripted per test (stdlib asyncio streams only).

It speaks enough of the chat-completions API for the real ``openai`` client: ``GET /v1/models`` and
``POST /v1/chat/completions`` with ``stream`` true (SSE over chunked transfer encoding, tool calls streamed in
fragments the way OpenAI does) or false. Each chat request takes the next scripted reply::

    async with OpenAITestServer(api_key="sk-test") as server:
        server.script(text_reply("Hello there", chunks=["Hel", "lo ", "there"]), error_reply(500))
        model = OpenAIChatModel(base_url=server.base_url, model="test-model", api_key="sk-test")

Every request is recorded (:attr:`OpenAITestServer.requests`); a request with no reply left gets the ``fallback``
reply if one is set (e.g. :func:`echo_reply`, for demos), else HTTP 500, counted in
:attr:`OpenAITestServer.unexpected` and reported by :meth:`OpenAITestServer.assert_used_up`.

For a demo, run it standalone: ``python -m companions.testing.openai_server --port 8765`` (it echoes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self, TypeAlias


@dataclass(frozen=True)
class TextReply:
    """Assistant text, streamed as ``chunks`` (default: the whole text in one chunk), then ``finish_reason``."""

    text: str
    chunks: tuple[str, ...] | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class ToolCallSpec:
    name: str
    arguments: str
    id: str


@dataclass(frozen=True)
class ToolCallReply:
    """Tool calls (optionally after some text), arguments streamed in fragments of ``fragment_size`` characters."""

    calls: tuple[ToolCallSpec, ...]
    text: str = ""
    fragment_size: int = 7


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with an OpenAI-shaped body; ``retry_after`` sets the Retry-After header (seconds)."""

    status: int
    message: str = "scripted failure"
    retry_after: float | None = None


@dataclass(frozen=True)
class StallReply:
    """Streams ``chunks`` (maybe none), then hangs until the client goes away (or the server stops);
    ``before_headers`` hangs before even the response headers."""

    chunks: tuple[str, ...] = ()
    before_headers: bool = False


Reply: TypeAlias = TextReply | ToolCallReply | ErrorReply | StallReply
Fallback: TypeAlias = Callable[[dict[str, Any]], Reply]  # request body -> reply, when the script is used up


def text_reply(text: str, *, chunks: Sequence[str] | None = None, finish_reason: str = "stop") -> TextReply:
    if chunks is not None and "".join(chunks) != text:
        raise ValueError("the chunks must add up to the text")
    return TextReply(text, tuple(chunks) if chunks is not None else None, finish_reason)


def tool_call_reply(*calls: tuple[str, dict[str, Any] | str], text: str = "", fragment_size: int = 7) -> ToolCallReply:
    """``tool_call_reply(("speak", {"text": "hi"}), ("gesture", '{"name": "wave"'))`` (a str is sent verbatim)."""
    specs = tuple(
        ToolCallSpec(name, args if isinstance(args, str) else json.dumps(args, ensure_ascii=False), f"call_{i}")
        for i, (name, args) in enumerate(calls)
    )
    return ToolCallReply(specs, text, fragment_size)


def error_reply(status: int, message: str = "scripted failure", *, retry_after: float | None = None) -> ErrorReply:
    return ErrorReply(status, message, retry_after)


def stall_reply(*chunks: str, before_headers: bool = False) -> StallReply:
    return StallReply(tuple(chunks), before_headers)


def echo_reply(body: dict[str, Any]) -> Reply:
    """A fallback that answers with the last user message's text, streamed word by word."""
    text = ""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            text = f"You said: {content}"
            break
    if not text:
        return TextReply("Hello!")
    words = text.split(" ")
    return TextReply(text, (*(w + " " for w in words[:-1]), words[-1]))


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any] = field(default_factory=dict)


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class OpenAITestServer:
    """See the module docstring. ``api_key`` (if set) is required as a Bearer token; ``models`` are the only
    model ids accepted by chat requests (404 ``model_not_found`` otherwise) and listed by ``GET /v1/models``."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        models: Sequence[str] = ("test-model",),
        port: int = 0,
        fallback: Fallback | None = None,
    ) -> None:
        self.api_key = api_key
        self.fallback = fallback
        self.models = tuple(models)
        self._port = port
        self._replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.unexpected = 0
        self.client_gone = asyncio.Event()  # set when a stalled reply's client disconnected
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._request_seen = asyncio.Event()

    # -- scripting ------------------------------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queues replies for the next chat requests, in order."""
        self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies were not used yet."""
        return len(self._replies)

    def assert_used_up(self) -> None:
        """Raises AssertionError if scripted replies were left or a request found no reply."""
        if self._replies or self.unexpected:
            raise AssertionError(
                f"test server: {len(self._replies)} unused replies, {self.unexpected} unexpected requests"
            )

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    async def wait_for_requests(self, count: int, timeout: float = 5.0) -> None:
        """Waits until ``count`` chat requests arrived."""
        async with asyncio.timeout(timeout):
            while len(self.chat_requests()) < count:
                self._request_seen.clear()
                await self._request_seen.wait()

    # -- lifecycle ------------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_connection, "127.0.0.1", self._port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- HTTP -----------------------------------------------------------------------------------------------------

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            try:
                while await self._serve_one(reader, writer):
                    pass
            except (ConnectionError, asyncio.IncompleteReadError, ValueError):  # ValueError: not HTTP at all
                pass
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
        except asyncio.CancelledError:
            # Only stop() cancels handlers; on 3.11 asyncio's stream callback logs a cancelled handler as an error.
            pass
        finally:
            self._handlers.discard(task)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serves one request; False when the connection should end."""
        request_line = await reader.readline()
        if not request_line.strip():
            return False
        method, target, _ = request_line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        path = target.split("?", 1)[0]
        self.requests.append(RecordedRequest(method, path, headers, body if isinstance(body, dict) else {}))
        self._request_seen.set()
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            await _send_error(writer, ErrorReply(401, "Incorrect API key provided."), code="invalid_api_key")
        elif method == "GET" and path.endswith("/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "madoi-test"} for m in self.models]
            await _send_json(writer, 200, {"object": "list", "data": data})
        elif method == "POST" and path.endswith("/chat/completions"):
            return await self._chat(reader, writer, body)
        else:
            await _send_error(writer, ErrorReply(404, f"no route for {method} {path}"), code="not_found")
        return True

    async def _chat(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: dict[str, Any]) -> bool:
        model = str(body.get("model", ""))
        if model not in self.models:
            await _send_error(writer, ErrorReply(404, f"The model `{model}` does not exist."), code="model_not_found")
            return True
        if not self._replies and self.fallback is not None:
            self._replies.append(self.fallback(body))
        if not self._replies:
            self.unexpected += 1
            await _send_error(writer, ErrorReply(500, "test server: no scripted reply left"), code="script_exhausted")
            return True
        reply = self._replies.popleft()
        if isinstance(reply, ErrorReply):
            await _send_error(writer, reply)
            return True
        if isinstance(reply, StallReply) and (reply.before_headers or not body.get("stream")):
            return await self._stall(reader)
        if not isinstance(reply, StallReply) and not body.get("stream"):
            await _send_json(writer, 200, _whole_completion(model, reply))
            return True
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for chunk in _stream_chunks(model, reply):
            await _send_chunk(writer, f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
        if isinstance(reply, StallReply):
            return await self._stall(reader)
        await _send_chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _stall(self, reader: asyncio.StreamReader) -> bool:
        with contextlib.suppress(ConnectionError):
            while await reader.read(1024):
                pass
        self.client_gone.set()
        return False


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _stream_chunks(model: str, reply: TextReply | ToolCallReply | StallReply) -> list[dict[str, Any]]:
    chunks = [_chunk(model, {"role": "assistant", "content": ""})]
    if isinstance(reply, TextReply):
        pieces = reply.chunks if reply.chunks is not None else (reply.text,)
        chunks += [_chunk(model, {"content": p}) for p in pieces]
        chunks.append(_chunk(model, {}, reply.finish_reason))
    elif isinstance(reply, StallReply):
        chunks += [_chunk(model, {"content": p}) for p in reply.chunks]
    else:
        if reply.text:
            chunks.append(_chunk(model, {"content": reply.text}))
        for index, call in enumerate(reply.calls):
            head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            chunks.append(_chunk(model, {"tool_calls": [head]}))
            size = max(1, reply.fragment_size)
            for start in range(0, len(call.arguments), size):
                fragment = {"index": index, "function": {"arguments": call.arguments[start : start + size]}}
                chunks.append(_chunk(model, {"tool_calls": [fragment]}))
        chunks.append(_chunk(model, {}, "tool_calls"))
    return chunks


def _whole_completion(model: str, reply: TextReply | ToolCallReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    finish = "stop"
    if isinstance(reply, TextReply):
        finish = reply.finish_reason
    else:
        finish = "tool_calls"
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


async def _send_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def _send_json(writer: asyncio.StreamWriter, status: int, payload: object, extra: str = "") -> None:
    data = json.dumps(payload, ensure_ascii=False).encode()
    head = f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\ncontent-type: application/json\r\n"
    writer.write(f"{head}content-length: {len(data)}\r\n{extra}\r\n".encode() + data)
    await writer.drain()


async def _send_error(writer: asyncio.StreamWriter, reply: ErrorReply, *, code: str | None = None) -> None:
    extra = f"retry-after: {reply.retry_after}\r\n" if reply.retry_after is not None else ""
    body = {"error": {"message": reply.message, "type": "invalid_request_error", "code": code, "param": None}}
    await _send_json(writer, reply.status, body, extra)


async def _serve_forever(port: int, model: str, demo: bool) -> None:
    fallback: Fallback = echo_reply
    if demo:
        from companions.testing.demo_director import DemoDirector

        fallback = DemoDirector()
    async with OpenAITestServer(models=[model], port=port, fallback=fallback) as server:
        what = "plays a group conversation" if demo else "echoes"
        print(f"OpenAI-compatible server at {server.base_url} (model {model!r}) {what}; Ctrl+C stops it", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="A local OpenAI-compatible server for demos: it echoes, or with "
                                     "--demo plays Madoi's companions in a conversation that ends by itself.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--model", default="echo")
    parser.add_argument("--demo", action="store_true", help="answer as the companions (see demo_director.py)")
    options = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(options.port, options.model, options.demo))
