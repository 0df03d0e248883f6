"""The chat-completions wire format: stream chunks and whole completions built from a reply, and HTTP writes."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Final

from companions.testing.openai_server.profiles import estimate_tokens
from companions.testing.openai_server.replies import ErrorReply, StallReply, TextReply, ToolCallReply

REASONS: Final = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def stream_chunks(model: str, reply: TextReply | ToolCallReply | StallReply) -> list[tuple[dict[str, Any], int]]:
    """The stream's chunks, each with the tokens generated for it (the role chunk and the end cost none)."""
    chunks: list[tuple[dict[str, Any], int]] = [(chunk(model, {"role": "assistant", "content": ""}), 0)]

    def content(piece: str) -> tuple[dict[str, Any], int]:
        return chunk(model, {"content": piece}), estimate_tokens(piece)

    if isinstance(reply, TextReply):
        pieces = reply.chunks if reply.chunks is not None else (reply.text,)
        chunks += [content(p) for p in pieces]
        chunks.append((chunk(model, {}, reply.finish_reason), 0))
    elif isinstance(reply, StallReply):
        chunks += [content(p) for p in reply.chunks]
    else:
        if reply.text:
            chunks.append(content(reply.text))
        for index, call in enumerate(reply.calls):
            head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            chunks.append((chunk(model, {"tool_calls": [head]}), estimate_tokens(call.name)))
            if reply.fragments is not None:
                pieces = reply.fragments[index]
            else:
                size = max(1, reply.fragment_size)
                pieces = tuple(call.arguments[s : s + size] for s in range(0, len(call.arguments), size))
            for piece in pieces:
                fragment = {"index": index, "function": {"arguments": piece}}
                chunks.append((chunk(model, {"tool_calls": [fragment]}), estimate_tokens(piece)))
        chunks.append((chunk(model, {}, reply.finish_reason), 0))
    return chunks


def whole_completion(model: str, reply: TextReply | ToolCallReply, prompt_tokens: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if isinstance(reply, TextReply):
        completion_tokens = estimate_tokens(reply.text)
    else:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ]
        completion_tokens = estimate_tokens(reply.text + "".join(c.name + c.arguments for c in reply.calls))
    completion_tokens = max(1, completion_tokens)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


async def send_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def send_json(writer: asyncio.StreamWriter, status: int, payload: object, extra: str = "") -> None:
    data = json.dumps(payload, ensure_ascii=False).encode()
    head = f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\ncontent-type: application/json\r\n"
    writer.write(f"{head}content-length: {len(data)}\r\n{extra}\r\n".encode() + data)
    await writer.drain()


async def send_error(writer: asyncio.StreamWriter, reply: ErrorReply, *, code: str | None = None) -> None:
    extra = f"retry-after: {reply.retry_after}\r\n" if reply.retry_after is not None else ""
    body = reply.body
    if body is None:
        body = {"error": {"message": reply.message, "type": "invalid_request_error", "code": code, "param": None}}
    await send_json(writer, reply.status, body, extra)
