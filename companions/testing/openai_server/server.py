"""The OpenAI-compatible test server: real HTTP on loopback (stdlib asyncio streams), scripted per test, shaped by a
:class:`~companions.testing.openai_server.profiles.ServerProfile` (see the package docstring)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from companions.testing.loopback import LoopbackServer, read_request_head
from companions.testing.openai_server.profiles import ServerProfile, prompt_text
from companions.testing.openai_server.rendering import refusal, rendered, visible_body
from companions.testing.openai_server.replies import (
    ErrorReply,
    Fallback,
    RecordedRequest,
    Reply,
    StallReply,
    TextReply,
    ToolCallReply,
    text_reply,
)
from companions.testing.openai_server.slots import SlotPool
from companions.testing.openai_server.wire import send_chunk, send_error, send_json, stream_chunks, whole_completion


class OpenAITestServer(LoopbackServer):
    """See the package docstring (companions/testing/loopback.py: its start and stop). ``api_key`` (if set) is
    required as a Bearer token; ``models`` are the only model ids accepted by chat requests (404
    ``model_not_found`` otherwise) and listed by ``GET /v1/models``; ``profile`` makes it behave like a real server
    (default: no delays, no queue, everything accepted)."""

    path = "/v1"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        models: Sequence[str] = ("test-model",),
        port: int = 0,
        fallback: Fallback | None = None,
        profile: ServerProfile | None = None,
    ) -> None:
        super().__init__(port)
        self.profile = profile if profile is not None else ServerProfile()
        self._pool = SlotPool(self.profile)
        self.api_key = api_key
        self.fallback = fallback
        self.models = tuple(models)
        self._replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.unexpected = 0
        self.client_gone = asyncio.Event()  # set when a stalled reply's client disconnected
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

    # -- HTTP -----------------------------------------------------------------------------------------------------

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serves one request; False when the connection should end."""
        head = await read_request_head(reader)
        if head is None:
            return False
        method, target, headers = head
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        path = target.split("?", 1)[0]
        record = RecordedRequest(method, path, headers, body if isinstance(body, dict) else {}, time.monotonic())
        self.requests.append(record)
        self._request_seen.set()
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            await send_error(writer, ErrorReply(401, "Incorrect API key provided."), code="invalid_api_key")
        elif method == "GET" and path.endswith("/models"):
            if self.profile.models_wait_for_slot and self.profile.slots is not None:
                async with self._pool.held():
                    pass  # the server answers once the request it runs ends
            owner = self.profile.owned_by
            data = [{"id": m, "object": "model", "created": 0, "owned_by": owner} for m in self.models]
            await send_json(writer, 200, {"object": "list", "data": data})
        elif method == "GET" and path in self.profile.identity:
            await send_json(writer, 200, self.profile.identity[path])
        elif method == "GET" and self.profile.not_found is not None:
            await send_json(writer, 404, self.profile.not_found)
        elif method == "POST" and path.endswith("/chat/completions"):
            try:
                return await self._chat(reader, writer, record)
            finally:  # also when the client went away mid-reply, or the server stops
                if record.timing.finished is None:
                    record.timing.finished = time.monotonic()
        else:
            await send_error(writer, ErrorReply(404, f"no route for {method} {path}"), code="not_found")
        return True

    async def _chat(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: RecordedRequest) -> bool:
        body, timing = record.body, record.timing
        model = str(body.get("model", ""))
        if model not in self.models:
            timing.status = 404
            await send_error(writer, ErrorReply(404, f"The model `{model}` does not exist."), code="model_not_found")
            return True
        refused = refusal(self.profile, body)
        if refused is not None:
            timing.status = refused.status
            await send_error(writer, refused)
            return True
        seen = visible_body(self.profile, body)
        reply: Reply
        if _token_limit(body) == 1:
            # One token can hold none of the replies a test scripts: it is answered as a real server would (one
            # token, cut at the limit), after its prompt, without using the script. (Madoi's prompt warm-ups.)
            reply = text_reply("…", finish_reason="length")
        else:
            if not self._replies and self.fallback is not None:
                self._replies.append(self.fallback(seen))
            if not self._replies:
                self.unexpected += 1
                timing.status = 500
                await send_error(writer, ErrorReply(500, "test server: no scripted reply left"),
                                 code="script_exhausted")
                return True
            reply = self._replies.popleft()
        if isinstance(reply, ErrorReply):
            timing.status = reply.status
            await send_error(writer, reply)
            return True
        if isinstance(reply, StallReply) and (reply.before_headers or not body.get("stream")):
            return await self._stall(reader)
        reply = rendered(self.profile, reply, body)
        assert not isinstance(reply, ErrorReply)
        async with self._pool.admitted(prompt_text(seen)) as admission:
            timing.started = time.monotonic()
            timing.prompt_tokens, timing.cached_tokens = admission.prompt_tokens, admission.cached_tokens
            await _pause(self.profile.prompt_seconds(admission.prompt_tokens - admission.cached_tokens))
            if isinstance(reply, StallReply) or body.get("stream"):
                return await self._stream(reader, writer, model, reply, record)
            assert isinstance(reply, TextReply | ToolCallReply)
            completion = whole_completion(model, reply, admission.prompt_tokens)
            timing.completion_tokens = completion["usage"]["completion_tokens"]
            await _pause(self.profile.token_seconds(timing.completion_tokens))
            await send_json(writer, 200, completion)
            timing.first_chunk = timing.finished = time.monotonic()
            return True

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, model: str,
                      reply: TextReply | ToolCallReply | StallReply, record: RecordedRequest) -> bool:
        """Streams ``reply`` at the profile's pace; cut off (``data: [DONE]`` with no finish_reason) when the
        profile interrupts on a waiting request, ended when the client went away."""
        timing = record.timing
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for payload, tokens in stream_chunks(model, reply):
            await _pause(self.profile.token_seconds(tokens))
            await send_chunk(writer, f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())
            timing.completion_tokens += tokens
            if timing.first_chunk is None:
                timing.first_chunk = time.monotonic()
            if reader.at_eof():  # the client went away: the server notices after a chunk (as llama-cpp-python)
                timing.finished = time.monotonic()
                return False
            if self.profile.interrupt_on_new and self._pool.waiting:
                timing.interrupted = True
                break
        if isinstance(reply, StallReply):
            return await self._stall(reader)
        await send_chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        timing.finished = time.monotonic()
        return True

    async def _stall(self, reader: asyncio.StreamReader) -> bool:
        with contextlib.suppress(ConnectionError):
            while await reader.read(1024):
                pass
        self.client_gone.set()
        return False


def _token_limit(body: dict[str, Any]) -> int | None:
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    return limit if isinstance(limit, int) else None


async def _pause(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)
