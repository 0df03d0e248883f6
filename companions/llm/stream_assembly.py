"""Putting a streamed chat completion back together: text, tool calls in fragments, finish reason, usage, timing."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from companions.llm.types import ChatMessage, Completion, ToolCall, ToolCallDelta, Usage

if TYPE_CHECKING:
    import openai


class StreamAssembler:
    """Collects streamed chunks: text, and tool calls whose name/arguments arrive in fragments keyed by index.

    ``finish_reason`` stays None when no chunk carried one: a stream cut off by the server (llama-cpp-python ends
    the request in flight with ``[DONE]`` and no finish reason when another request arrives).
    ``first_token_at`` is the ``time.perf_counter()`` of the first text or tool-call fragment.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.chunks = 0
        self.first_token_at: float | None = None
        self._call_deltas: list[ToolCallDelta] = []

    def take_call_deltas(self) -> list[ToolCallDelta]:
        """The tool-call fragments of the chunks added since the last call."""
        deltas, self._call_deltas = self._call_deltas, []
        return deltas

    def add(self, chunk: openai.types.chat.ChatCompletionChunk) -> str:
        self.chunks += 1
        if chunk.usage is not None:
            self.usage = Usage(prompt_tokens=chunk.usage.prompt_tokens, completion_tokens=chunk.usage.completion_tokens)
        text = ""
        for choice in chunk.choices:
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            if delta.content:
                text += delta.content
            for position, fragment in enumerate(delta.tool_calls or ()):
                # Some servers send whole calls without an index; then each one is a new call.
                index = fragment.index if fragment.index is not None else len(self.calls) + position
                call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                if fragment.id:
                    call["id"] = fragment.id
                if fragment.function is not None:
                    name, arguments = fragment.function.name or "", fragment.function.arguments or ""
                    call["name"] += name
                    call["arguments"] += arguments
                    if name or arguments:
                        self._call_deltas.append(ToolCallDelta(index=index, name=name, arguments=arguments))
        if self.first_token_at is None and (text or self._call_deltas):
            self.first_token_at = time.perf_counter()
        self.text.append(text)
        return text

    def generated_text(self) -> str:
        """Everything generated so far (text and tool-call arguments), for estimating tokens without usage."""
        return "".join(self.text) + "".join(c["name"] + c["arguments"] for c in self.calls.values())

    def completion(self) -> Completion:
        calls = tuple(
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"] or "{}")
            for i, c in sorted(self.calls.items())
        )
        text = "".join(self.text)
        message = ChatMessage.assistant(text or None, calls)
        reason = self.finish_reason or "stop"
        finish = "tool_calls" if calls and reason == "stop" else reason
        return Completion(message=message, finish_reason=finish, usage=self.usage)
