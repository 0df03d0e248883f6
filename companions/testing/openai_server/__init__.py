"""A real OpenAI-compatible HTTP server on loopback, scripted per test (stdlib asyncio streams only).

It speaks enough of the chat-completions API for the real ``openai`` client: ``GET /v1/models`` and
``POST /v1/chat/completions`` with ``stream`` true (SSE over chunked transfer encoding, tool calls streamed in
fragments the way OpenAI does) or false. Each chat request takes the next scripted reply::

    async with OpenAITestServer(api_key="sk-test") as server:
        server.script(text_reply("Hello there", chunks=["Hel", "lo ", "there"]), error_reply(500))
        model = OpenAIChatModel(base_url=server.base_url, model="test-model", api_key="sk-test")

Every request is recorded (:attr:`OpenAITestServer.requests`, with its timing and estimated prompt tokens); a
request with no reply left gets the ``fallback`` reply if one is set (e.g. :func:`echo_reply`, or the demo
director), else HTTP 500, counted in :attr:`OpenAITestServer.unexpected` and reported by
:meth:`OpenAITestServer.assert_used_up`.

``OpenAITestServer(profile=PROFILES["llama-cpp-python"].scaled(0.05))`` behaves like that real server (one request
at a time, a new one cutting off the one in flight, token rates, refused formats, tool calls written as text),
20 times faster: see :mod:`~companions.testing.openai_server.profiles`.

For a demo, run it standalone: ``python -m companions.testing.openai_server --port 8765`` (it echoes), with
``--demo`` it plays the sample companions, with ``--profile NAME`` it behaves like that server.
"""

from companions.testing.openai_server.profiles import PROFILES, Refusal, ServerProfile, estimate_tokens, token_pieces
from companions.testing.openai_server.replies import (
    ErrorReply,
    Fallback,
    RecordedRequest,
    Reply,
    RequestTiming,
    StallReply,
    TextReply,
    ToolCallReply,
    ToolCallSpec,
    echo_reply,
    error_reply,
    stall_reply,
    text_reply,
    tool_call_reply,
)
from companions.testing.openai_server.server import OpenAITestServer

__all__ = [
    "PROFILES",
    "ErrorReply",
    "Fallback",
    "OpenAITestServer",
    "RecordedRequest",
    "Refusal",
    "Reply",
    "RequestTiming",
    "ServerProfile",
    "StallReply",
    "TextReply",
    "ToolCallReply",
    "ToolCallSpec",
    "echo_reply",
    "error_reply",
    "estimate_tokens",
    "stall_reply",
    "text_reply",
    "token_pieces",
    "tool_call_reply",
]
