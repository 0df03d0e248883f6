"""Finding a model to talk to: the configured endpoint, else a local OpenAI-compatible server, else a clear message.

:func:`detect_local_server` probes Ollama, LM Studio and llama.cpp concurrently with ``GET <base>/models`` and a
short timeout. Only an answer shaped like an OpenAI model list counts (JSON with model ids), so a WebSocket server
(Madoi's bridge, if a user moves it to one of these ports) or any other web server there is never mistaken for a
model server.
:func:`resolve_chat_model` turns the LLM settings into a ChatModel (or the message telling the user what to set).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from companions.llm.openai_backend import LOCAL_PLACEHOLDER_KEY, OpenAIChatModel, build_chat_model
from companions.llm.types import LLMError

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
NO_LLM_MESSAGE = (
    "No LLM is configured and no local model server answered ({tried}). Install Ollama (https://ollama.com) and "
    "run `ollama pull qwen2.5:3b`, or start LM Studio's or llama.cpp's server, or set a base URL, model and API key "
    "in Settings > LLM."
)


@dataclass(frozen=True)
class Candidate:
    kind: str
    base_url: str


LOCAL_CANDIDATES: tuple[Candidate, ...] = (
    Candidate("Ollama", "http://127.0.0.1:11434/v1"),
    Candidate("LM Studio", "http://127.0.0.1:1234/v1"),
    Candidate("llama.cpp", "http://127.0.0.1:8080/v1"),
)


@dataclass(frozen=True)
class DetectedServer:
    kind: str
    base_url: str
    models: tuple[str, ...]

    @property
    def default_model(self) -> str:
        return pick_default_model(self.models)


@dataclass(frozen=True)
class NoServer:
    """Nothing answered; ``message`` says what the user can do."""

    tried: tuple[str, ...]

    @property
    def message(self) -> str:
        return NO_LLM_MESSAGE.format(tried=", ".join(self.tried) or "nothing probed")


def pick_default_model(models: Sequence[str]) -> str:
    """The first chat model the server lists (embedding-only models skipped); servers list their default first."""
    chat = [m for m in models if "embed" not in m.lower()]
    return (chat or list(models))[0]


async def list_models(base_url: str, api_key: str | None = None, *, timeout_s: float = 1.0) -> tuple[str, ...]:
    """The model ids of an OpenAI-compatible server. Raises LLMError if it does not answer like one."""
    import openai

    client = openai.AsyncOpenAI(
        api_key=api_key or LOCAL_PLACEHOLDER_KEY, base_url=base_url, timeout=timeout_s, max_retries=0
    )
    try:
        async with asyncio.timeout(timeout_s):
            page = await client.models.list()
        ids = tuple(m.id for m in page.data if isinstance(getattr(m, "id", None), str) and m.id)
    except (openai.APIConnectionError, TimeoutError):  # APITimeoutError is an APIConnectionError
        raise LLMError(f"cannot reach {base_url} within {timeout_s:g} s; is the server running?") from None
    except openai.AuthenticationError:
        raise LLMError(f"{base_url} rejected the API key; check it in Settings") from None
    except (openai.OpenAIError, ValueError, TypeError, AttributeError) as exc:
        raise LLMError(f"{base_url} does not answer like an OpenAI-compatible server ({type(exc).__name__})") from None
    finally:
        await client.close()
    if not ids:
        raise LLMError(f"{base_url} lists no models; pull or load a model first")
    return ids


async def port_open(base_url: str, timeout_s: float) -> bool:
    """Whether something accepts TCP connections at ``base_url``'s host and port: a closed port is known at once,
    without loading the HTTP client (importing ``openai`` costs about half a second of start-up)."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        async with asyncio.timeout(timeout_s):
            _, writer = await asyncio.open_connection(parts.hostname or "127.0.0.1", port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def detect_local_server(
    candidates: Sequence[Candidate] = LOCAL_CANDIDATES, *, timeout_s: float = 0.8
) -> DetectedServer | NoServer:
    """Probes ``candidates`` concurrently; the first in list order that answered with a model list wins."""

    async def probe(candidate: Candidate) -> DetectedServer | None:
        if not await port_open(candidate.base_url, timeout_s):
            log.debug("no %s server: nothing listens at %s", candidate.kind, candidate.base_url)
            return None
        try:
            models = await list_models(candidate.base_url, timeout_s=timeout_s)
        except LLMError as exc:
            log.debug("no %s server: %s", candidate.kind, exc)
            return None
        return DetectedServer(candidate.kind, candidate.base_url, models)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(probe(c)) for c in candidates]
    for task in tasks:
        found = task.result()
        if found is not None:
            log.info("found %s at %s (default model %s)", found.kind, found.base_url, found.default_model)
            return found
    return NoServer(tuple(f"{c.kind} {c.base_url}" for c in candidates))


@dataclass(frozen=True)
class ModelResolution:
    """What :func:`resolve_chat_model` decided: a model and where it came from, or a message for the user."""

    model: OpenAIChatModel | None
    source: Literal["settings", "detected", "none"]
    message: str


async def resolve_chat_model(
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    *,
    autodetect: bool = True,
    timeout_s: float = 60.0,
    candidates: Sequence[Candidate] = LOCAL_CANDIDATES,
) -> ModelResolution:
    """The default ChatModel from the LLM settings.

    - base URL set: use it; with no model name, ask the server for its models and take the default one;
    - only an API key: OpenAI with :data:`DEFAULT_OPENAI_MODEL` (or the given model);
    - nothing and ``autodetect``: a local server found by :func:`detect_local_server`;
    - otherwise no model, and ``message`` says what to configure. Never raises.
    """
    try:
        if base_url is None and api_key:
            base_url = OPENAI_BASE_URL
            model = model or DEFAULT_OPENAI_MODEL
        if base_url is not None:
            if not model:
                model = pick_default_model(await list_models(base_url, api_key, timeout_s=min(5.0, timeout_s)))
            built = build_chat_model(base_url, model, api_key, timeout_s=timeout_s)
            return ModelResolution(built, "settings", f"using {model} at {base_url}")
    except LLMError as exc:
        return ModelResolution(None, "none", f"The configured LLM cannot be used: {exc}")
    if not autodetect:
        return ModelResolution(
            None, "none", "No LLM is configured; set a base URL, model and API key in Settings > LLM."
        )
    found = await detect_local_server(candidates)
    if isinstance(found, NoServer):
        return ModelResolution(None, "none", found.message)
    built = build_chat_model(found.base_url, found.default_model, None, timeout_s=timeout_s)
    return ModelResolution(built, "detected", f"using {found.default_model} on {found.kind} at {found.base_url}")
