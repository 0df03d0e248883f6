"""The ChatModel backend for any OpenAI-compatible endpoint (OpenAI, Ollama, LM Studio, llama.cpp server, vLLM).

Build one per companion with :func:`build_chat_model`. Streams through ``openai.AsyncOpenAI``; the client's own
retries are off because this module retries itself (exponential backoff with jitter, bounded, honouring
Retry-After) on 429, 5xx, timeouts and connection errors - but only while nothing was streamed yet, so a retry
never repeats text the consumer already saw. Every other failure is an :class:`LLMError` that says what to fix.
The API key lives only inside the client: it is never logged, and is scrubbed from error text and reprs.

What each server can do is negotiated, not assumed, and shared by every model object of one endpoint through its
:class:`~companions.llm.capabilities.EndpointCapabilities`:
- a request with ``response_format`` is sent in the endpoint's best structured mode (json_schema -> json_object ->
  tool -> text); an HTTP error that refuses the mode moves to the next one at once, for good
  (:mod:`companions.llm.negotiation`). Such a request streams no deltas: its value is the Completion's text;
- exactly one system message is sent (:mod:`companions.llm.system_messages`);
- every request carries ``max_tokens`` (the request's, else ``default_max_tokens``);
- requests pass the endpoint's :class:`~companions.llm.gate.ConcurrencyGate` (a local server: one at a time unless
  it says it has more slots, :mod:`companions.llm.server_probe`; a hosted API: unlimited), by
  ``request.priority``; a stream the server cut off (no finish reason) makes the
  gate one-at-a-time and is retried once through it when nothing of it was passed on yet;
- time to first token and tokens/s are measured per request (``stream_options.include_usage`` where accepted).
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from companions.llm.capabilities import EndpointCapabilities, StructuredMode, endpoint_capabilities, estimate_tokens
from companions.llm.health import model_health
from companions.llm.known_servers import known_facts
from companions.llm.negotiation import apply_mode, is_refusal, structured_completion
from companions.llm.server_probe import ServerIdentity, probe_server
from companions.llm.stream_assembly import StreamAssembler
from companions.llm.system_messages import with_one_system_message
from companions.llm.types import (
    ChatMessage,
    ChatRequest,
    Completion,
    ConnectionCause,
    ImagePart,
    LLMError,
    StreamEvent,
    TextDelta,
    TextPart,
)

log = logging.getLogger(__name__)

_OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Local servers ignore the key, but the client refuses to start without one.
LOCAL_PLACEHOLDER_KEY = "not-needed"
DEFAULT_MAX_TOKENS = 512  # for a request that names no limit: a small model must not run on until the timeout


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
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        import openai  # lazy: the core stays importable (and fast to import) without touching the client

        self._base_url = base_url.rstrip("/")
        self._model = model
        self._key = api_key or ""
        self._retry = retry or RetryPolicy()
        self._supports_images = supports_images
        self._default_max_tokens = default_max_tokens
        self._caps = endpoint_capabilities(self._base_url, model)
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

    @property
    def capabilities(self) -> EndpointCapabilities:
        """What this endpoint can do and how fast it is, shared with every model object of the same endpoint."""
        return self._caps

    def __repr__(self) -> str:
        return f"OpenAIChatModel(base_url={self._base_url!r}, model={self._model!r})"

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams TextDelta/ToolCallDelta events, then one Completion (a structured request: only the Completion).
        Raises LLMError; cancellation closes the HTTP stream and frees the gate's slot."""
        caps = self._caps
        priority = request.priority
        messages = with_one_system_message(request.messages)
        if messages is not request.messages:
            request = request.model_copy(update={"messages": messages})
        for last_chance in (False, True):
            run = _Run(last_chance)
            async with caps.gate.slot(priority):
                if caps.claim_probe():  # not identified before this request (learning.py does it at start)
                    await self._identify()
                async for event in self._run(request, run):
                    yield event
            if not run.cut_off:
                return
            caps.stream_cut_off()

    async def identify(self, priority: int) -> ServerIdentity | None:
        """Asks the server what it is (GETs, no completion) at ``priority`` through the endpoint's gate, even when it
        was asked before (it may have changed since), and applies what is known of it; None for a hosted API."""
        caps = self._caps
        if not caps.local:
            return None
        async with caps.gate.slot(priority):
            caps.claim_probe()
            return await self._identify()

    async def _identify(self) -> ServerIdentity:
        identity = await probe_server(self._client, self._base_url)
        known = known_facts(identity)
        self._caps.learn_server(identity, mode=known.structured_mode, tools_as_text=known.tools_as_text)
        return identity

    async def _run(self, request: ChatRequest, run: _Run) -> AsyncIterator[StreamEvent]:
        """One request inside the gate: structured mode negotiation, bounded retries, measurement."""
        import openai

        caps, fmt = self._caps, request.response_format
        mode: StructuredMode | None = caps.structured_mode if fmt is not None else None
        attempt = 0
        while True:
            params = self._params(request, mode)
            streamed_anything = False
            try:
                started = time.perf_counter()
                stream = await self._client.chat.completions.create(**params)
                model_health.answered(self._base_url)  # it answers (whatever the answer says)
                if mode is not None:
                    caps.confirm_mode(mode)
                assembler = StreamAssembler()
                try:
                    async for chunk in stream:
                        text = assembler.add(chunk)
                        if fmt is not None:
                            continue  # the value is the Completion (a tool call or wrapped text in some modes)
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
                completion = self._finished(request, assembler, started, run, streamed_anything)
                if completion is None:
                    return  # cut off with nothing passed on: the caller retries through the gate
                if fmt is not None and mode is not None:
                    completion = structured_completion(completion, fmt, mode)
                yield completion
                return
            except openai.OpenAIError as exc:
                error = self._llm_error(exc)
                if error.model_down:
                    model_health.failed(error)  # said at once: the retries below take seconds
                detail = _server_message(exc) if isinstance(exc, openai.APIStatusError) else ""
                if detail and self._drop_refused_parameter(detail):
                    continue  # a parameter this endpoint refuses, learned for good: again at once without it
                if request.tools and fmt is None and error.status == 400 and "tool" in detail.lower():
                    # vLLM without --enable-auto-tool-choice refuses "auto" tools: the turn goes on as plain text.
                    log.info("%s: tools refused (%s); plain replies from now on", self._base_url, detail[:120])
                    caps.tools_as_text = True
                    request = request.model_copy(update={"tools": ()})
                    continue
                if mode is not None and detail and is_refusal(error.status, detail):
                    next_mode = caps.refuse_mode(mode, self._scrub(detail))
                    if next_mode is not None:
                        mode = next_mode  # a capability fact, not a failure: the next mode at once
                        continue
                if not error.retryable or streamed_anything or attempt >= self._retry.max_retries:
                    model_health.failed(error)
                    raise error from None
                delay = self._retry.delay(attempt, _retry_after(exc))
                attempt += 1
                log.warning("%s: %s; retry %d in %.2fs", self._model, error, attempt, delay)
                await asyncio.sleep(delay)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a buggy or non-OpenAI server
                detail = self._scrub(f"{type(exc).__name__}: {exc}")[:300]
                error = LLMError(f"{self._base_url} answered with something that is not a chat stream ({detail})",
                                 endpoint=self._base_url)
                model_health.failed(error)
                raise error from None

    def _drop_refused_parameter(self, detail: str) -> bool:
        """Learns from an error that names a parameter the endpoint does not take; True if there was one."""
        caps = self._caps
        if caps.include_usage and "stream_options" in detail:
            caps.include_usage = False
            return True
        if caps.token_limit_parameter == "max_tokens" and "max_completion_tokens" in detail:
            caps.token_limit_parameter = "max_completion_tokens"  # OpenAI's reasoning models
            return True
        return False

    def _finished(
        self, request: ChatRequest, assembler: StreamAssembler, started: float, run: _Run, streamed: bool
    ) -> Completion | None:
        """The Completion of a stream that ended, measured; None when the server cut it off and it can be retried
        (a cut stream that cannot is passed on as it is, with finish_reason "length")."""
        caps = self._caps
        if assembler.finish_reason is None and caps.sends_finish_reason:
            if not streamed and not run.last_chance:
                run.cut_off = True
                return None
            log.warning("%s: the server cut the answer off", self._base_url)
            return assembler.completion().model_copy(update={"finish_reason": "length"})
        if assembler.finish_reason is not None:
            caps.sends_finish_reason = True
        if assembler.first_token_at is not None:
            ended = time.perf_counter()
            usage = assembler.usage
            caps.record(
                prompt_tokens=usage.prompt_tokens if usage else sum(estimate_tokens(m.text) for m in request.messages),
                ttft_s=assembler.first_token_at - started,
                completion_tokens=usage.completion_tokens if usage else estimate_tokens(assembler.generated_text()),
                generation_s=ended - assembler.first_token_at,
                prompt_text=_prompt_text(request),
            )
        return assembler.completion()

    # -- request -------------------------------------------------------------------------------------------------

    def _params(self, request: ChatRequest, mode: StructuredMode | None) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if request.response_format is not None and mode is not None:
            request, extra = apply_mode(request, mode)
        params: dict[str, Any] = {
            "model": self._model,
            "messages": [self._message(m) for m in request.messages],
            "stream": True,
        }
        params[self._caps.token_limit_parameter] = request.max_tokens or self._default_max_tokens
        if self._caps.include_usage:
            params["stream_options"] = {"include_usage": True}
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
            params["tool_choice"] = request.tool_choice
        params.update(extra)
        if request.temperature is not None:
            params["temperature"] = request.temperature
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
            if connection_cause(exc) == "connect-timeout":
                return LLMError(f"cannot reach {where}: no connection within the connect timeout; is the server "
                                "running and the base URL right?", retryable=True, kind="unreachable",
                                cause="connect-timeout", endpoint=where)
            return LLMError(f"{where}: the model {self._model!r} timed out", retryable=True, kind="timed-out",
                            endpoint=where)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            why = connection_cause(exc)
            if why == "connection-lost":
                text = f"{where} went away in the middle of a request ({type(cause).__name__}: {cause}); did the " \
                       "server stop or crash?"
            else:
                text = f"cannot reach {where} ({type(cause).__name__}: {cause}); is the server running and the " \
                       "base URL right?"
            return LLMError(
                self._scrub(text),
                retryable=True,
                kind="crashed" if why == "connection-lost" else "unreachable",
                cause=why,
                endpoint=where,
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
            return LLMError(text, retryable=status == 429 or status >= 500 or status == 408, status=status,
                            kind="crashed" if status >= 500 else "refused", endpoint=where)
        return LLMError(self._scrub(f"{where}: {type(exc).__name__}: {exc}"), endpoint=where)


def connection_cause(exc: BaseException) -> ConnectionCause:
    """Why a connection failed, from the chain of causes of ``exc`` (the client's error wraps its HTTP library's,
    which wraps the socket's): refused, an unknown host, no connection in time, or lost in the middle of a request.
    The HTTP library's errors are known by their class names (the client may bring its own copy of httpx)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names = {cls.__name__ for cls in type(current).__mro__}
        text = str(current).lower()
        if isinstance(current, ConnectionRefusedError) or "connection refused" in text:
            return "connection-refused"
        if isinstance(current, socket.gaierror) or "name or service not known" in text \
                or "nodename nor servname" in text:
            return "unknown-host"
        if "ConnectTimeout" in names:
            return "connect-timeout"
        if isinstance(current, ConnectionResetError) or names & {"RemoteProtocolError", "ReadError"}:
            return "connection-lost"
        current = current.__cause__ or current.__context__
    return ""


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


def _prompt_text(request: ChatRequest) -> str:
    """What the server reads of ``request``, in its order, as text: the tools offered (a chat template writes them
    into the system prompt), then each message (what two requests share from the start, a prompt cache holds)."""
    tools = " ".join(t.name for t in request.tools)
    return "\n".join([f"tools: {tools}", *(f"{m.role}: {m.text}" for m in request.messages)])


@dataclass
class _Run:
    """One pass of a request through the gate: whether it is the last one, and whether the server cut it off."""

    last_chance: bool
    cut_off: bool = False


def build_chat_model(
    base_url: str,
    model: str,
    api_key: str | None = None,
    *,
    timeout_s: float = 60.0,
    supports_images: bool = True,
    retry: RetryPolicy | None = None,
    default_max_tokens: int = DEFAULT_MAX_TOKENS,
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
        default_max_tokens=default_max_tokens,
    )
