"""The ChatModel backend for any OpenAI-compatible endpoint (OpenAI, Ollama, LM Studio, llama.cpp server, vLLM).

Build one per companion with :func:`build_chat_model`. Streams through ``openai.AsyncOpenAI``; the client's own
retries are off because this module retries itself (exponential backoff with jitter, bounded, honouring
Retry-After) on 429, 5xx, timeouts and connection errors - but only while nothing was streamed yet, so a retry
never repeats text the consumer already saw. Every other failure is an :class:`LLMError` that says what to fix.
The API key lives only inside the client: it is never logged, and is scrubbed from error text and reprs.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from companions.llm.types import (
    ChatMessage,
    ChatRequest,
    Completion,
    ImagePart,
    LLMError,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    Usage,
)

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

_OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Local servers ignore the key, but the client refuses to start without one.
LOCAL_PLACEHOLDER_KEY = "not-needed"


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits uniform(0.5, 1) * min(max_delay_s, base_delay_s * 2**n)."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay_s)
        backoff: float = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        return backoff * random.uniform(0.5, 1.0)


class OpenAIChatModel:
    """A :class:`~companions.llm.types.ChatModel` speaking the chat-completions API. See the module docstring."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        supports_images: bool = True,
    ) -> None:
        import openai  # lazy: the core stays importable (and fast to import) without touching the client

        self._base_url = base_url.rstrip("/")
        self._model = model
        self._key = api_key or ""
        self._retry = retry or RetryPolicy()
        self._supports_images = supports_images
        self._client = openai.AsyncOpenAI(
            api_key=api_key or LOCAL_PLACEHOLDER_KEY,
            base_url=self._base_url,
            timeout=openai.Timeout(timeout_s, connect=min(5.0, timeout_s)),
            max_retries=0,
        )

    @property
    def name(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def supports_images(self) -> bool:
        return self._supports_images

    def __repr__(self) -> str:
        return f"OpenAIChatModel(base_url={self._base_url!r}, model={self._model!r})"

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams TextDelta events, then one Completion. Raises LLMError; cancellation closes the HTTP stream."""
        import openai

        params = self._params(request)
        attempt = 0
        while True:
            streamed_anything = False
            try:
                stream = await self._client.chat.completions.create(**params)
                try:
                    assembler = _Assembler()
                    async for chunk in stream:
                        text = assembler.add(chunk)
                        if text:
                            streamed_anything = True
                            yield TextDelta(text=text)
                        for delta in assembler.take_call_deltas():
                            streamed_anything = True
                            yield delta
                finally:
                    await stream.close()
                if not assembler.chunks:
                    raise LLMError(
                        f"{self._base_url} sent no chat completion chunks; is it an OpenAI-compatible /v1 endpoint?"
                    )
                yield assembler.completion()
                return
            except openai.OpenAIError as exc:
                error = self._llm_error(exc)
                if not error.retryable or streamed_anything or attempt >= self._retry.max_retries:
                    raise error from None
                delay = self._retry.delay(attempt, _retry_after(exc))
                attempt += 1
                log.warning("%s: %s; retry %d in %.2fs", self._model, error, attempt, delay)
                await asyncio.sleep(delay)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a buggy or non-OpenAI server
                detail = self._scrub(f"{type(exc).__name__}: {exc}")[:300]
                raise LLMError(
                    f"{self._base_url} answered with something that is not a chat stream ({detail})"
                ) from None

    # -- request -------------------------------------------------------------------------------------------------

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self._model,
            "messages": [self._message(m) for m in request.messages],
            "stream": True,
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
            params["tool_choice"] = request.tool_choice
        if request.response_format is not None:
            fmt = request.response_format
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": fmt.name, "schema": fmt.schema_, "strict": fmt.strict},
            }
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.max_tokens is not None:
            params["max_tokens"] = request.max_tokens
        return params

    def _message(self, message: ChatMessage) -> dict[str, Any]:
        out: dict[str, Any] = {"role": message.role}
        if message.role == "tool":
            out["content"] = message.text
            out["tool_call_id"] = message.tool_call_id or ""
            return out
        if isinstance(message.content, list):
            parts: list[dict[str, Any]] = []
            for part in message.content:
                if isinstance(part, TextPart):
                    parts.append({"type": "text", "text": part.text})
                elif isinstance(part, ImagePart) and self._supports_images:
                    parts.append({"type": "image_url", "image_url": {"url": part.url}})
            out["content"] = parts
        else:
            out["content"] = message.content
        if message.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ]
        # OpenAI rejects names outside [A-Za-z0-9_-]; such speaker names must be carried in the text instead.
        if message.name and _OPENAI_NAME.match(message.name):
            out["name"] = message.name
        return out

    # -- errors --------------------------------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def _llm_error(self, exc: Exception) -> LLMError:
        import openai

        where = self._base_url
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"{where}: the model {self._model!r} timed out", retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return LLMError(
                self._scrub(
                    f"cannot reach {where} ({type(cause).__name__}: {cause}); is the server running and the "
                    "base URL right?"
                ),
                retryable=True,
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = self._scrub(_server_message(exc))
            if status in (401, 403):
                text = f"{where} rejected the API key (HTTP {status}: {detail}); check the API key in Settings"
            elif status == 404:
                text = (
                    f"{where}: unknown model {self._model!r} or wrong base URL (HTTP 404: {detail}); check the "
                    "model name and that the base URL ends in /v1"
                )
            elif status == 429:
                text = f"{where}: rate limited or out of quota (HTTP 429: {detail})"
            elif status >= 500:
                text = f"{where}: server error (HTTP {status}: {detail})"
            else:
                text = f"{where} refused the request for model {self._model!r} (HTTP {status}: {detail})"
            return LLMError(text, retryable=status == 429 or status >= 500 or status == 408, status=status)
        return LLMError(self._scrub(f"{where}: {type(exc).__name__}: {exc}"))


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        message = inner.get("message") if isinstance(inner, dict) else body.get("message")
        if message:
            return str(message)[:300]
    return str(getattr(exc, "message", exc))[:300]


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class _Assembler:
    """Collects streamed chunks: text, and tool calls whose name/arguments arrive in fragments keyed by index."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason = "stop"
        self.usage: Usage | None = None
        self.chunks = 0
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
        self.text.append(text)
        return text

    def completion(self) -> Completion:
        calls = tuple(
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"] or "{}")
            for i, c in sorted(self.calls.items())
        )
        text = "".join(self.text)
        message = ChatMessage.assistant(text or None, calls)
        finish = "tool_calls" if calls and self.finish_reason == "stop" else self.finish_reason
        return Completion(message=message, finish_reason=finish, usage=self.usage)


def build_chat_model(
    base_url: str,
    model: str,
    api_key: str | None = None,
    *,
    timeout_s: float = 60.0,
    supports_images: bool = True,
    retry: RetryPolicy | None = None,
) -> OpenAIChatModel:
    """The ChatModel for one endpoint + model (from Settings or a companion card). Raises LLMError on bad values."""
    if not base_url.startswith(("http://", "https://")):
        raise LLMError(f"LLM base URL {base_url!r} must start with http:// or https://")
    if not model.strip():
        raise LLMError(f"no model name given for {base_url}; set the model in Settings or the companion card")
    return OpenAIChatModel(
        base_url=base_url,
        model=model,
        api_key=api_key,
        timeout_s=timeout_s,
        retry=retry,
        supports_images=supports_images,
    )
