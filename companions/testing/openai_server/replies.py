"""What a chat request gets back: scripted replies and their constructors, and the request as recorded."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias


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
    """Tool calls (optionally after some text), arguments streamed in fragments of ``fragment_size`` characters
    (or in ``fragments`` when given, e.g. token-sized pieces), then ``finish_reason``."""

    calls: tuple[ToolCallSpec, ...]
    text: str = ""
    fragment_size: int = 7
    finish_reason: str = "tool_calls"
    fragments: tuple[tuple[str, ...], ...] | None = None  # per call, when set: the argument pieces as streamed


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with an OpenAI-shaped body; ``retry_after`` sets the Retry-After header (seconds).
    ``body`` replaces the OpenAI-shaped body when a server answers in its own shape."""

    status: int
    message: str = "scripted failure"
    retry_after: float | None = None
    body: dict[str, Any] | None = None


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


@dataclass
class RequestTiming:
    """Filled in while a chat request is served (see :class:`RecordedRequest`)."""

    started: float | None = None
    first_chunk: float | None = None
    finished: float | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    interrupted: bool = False
    status: int = 200


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as it arrived; for chat requests, ``started``/``first_chunk``/``finished`` are the
    server's monotonic clock when its slot began, its first chunk was sent and it ended (``None`` if it never
    did), ``prompt_tokens`` the estimated prompt and ``cached_tokens`` the part a slot's prompt cache held."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any] = field(default_factory=dict)
    arrived: float = 0.0
    timing: RequestTiming = field(default_factory=RequestTiming)
