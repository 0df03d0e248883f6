"""Learning what a model endpoint can do before the user speaks, and keeping it across restarts.

Measured on llama-cpp-python with a 0.5B model: a fresh Madoi learned the server during the user's first
turn, one request at a time (json_schema refused with HTTP 500, a grammar-constrained events request, a tool call
written as text and thrown away...): the first line came after 27 s against a 4.4-5.5 s completion. So from the
moment a model is configured (the app's start, Save, Check again) :func:`learn_endpoint` runs, at the lowest
priority of the endpoint's gate (a turn's request always goes first):

1. **Identify** the server with GETs (server_probe.py: ``/v1/models``, then ``/openapi.json``, ``/props``,
   ``/api/version`` or ``/version``): no completion, milliseconds.
2. **What was learned at an earlier start** is taken as it is when the server is the same one (same kind, version,
   slots and model list: :attr:`ServerIdentity.fingerprint`), speed included: a second start knows at once. A
   server that changed is learned again.
3. **What is known** of that server and version (known_servers.py) is taken without asking.
4. **What is still unknown is asked with the smallest request that answers it**: the structured-output mode with a
   one-token request (the server accepts or refuses the mode before it generates anything), whether the model's
   tool calls come back as calls or as text with one short request offering the ``speak`` tool.

What was learned is written to ``model-servers.json`` in the data directory (:class:`LearnedEndpoints`), and again
when the app stops (with the speed measured meanwhile). The file is the app's own, but it is read as untrusted: a
record that does not validate is ignored (and learned again).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from companions.llm import priorities
from companions.llm.capabilities import EndpointCapabilities, StructuredMode, capabilities_of
from companions.llm.types import ChatMessage, ChatModel, ChatRequest, JsonSchemaFormat, LLMError, ToolSpec, complete

if TYPE_CHECKING:
    from companions.llm.openai_backend import OpenAIChatModel

log = logging.getLogger(__name__)

FILE_NAME: Final = "model-servers.json"
FILE_VERSION: Final = 1
PROBE_FORMAT: Final = JsonSchemaFormat(name="probe", schema_={
    "title": "probe", "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
PROBE_TOOL: Final = ToolSpec(name="speak", description="Say a line aloud.", parameters={
    "type": "object", "properties": {"message": {"type": "string", "maxLength": 40}}, "required": ["message"]})
TOOL_PROBE_TOKENS: Final = 32  # enough for a short call or a line; the answer is whether a call came back


class LearnedEndpoint(BaseModel):
    """What was learned about one endpoint (base URL + model), and of which server."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    base_url: str
    model: str
    fingerprint: str
    server: str | None = None
    version: str | None = None
    structured_mode: StructuredMode
    tools_as_text: bool
    ttft_s: float | None = Field(default=None, ge=0)
    prompt_tps: float | None = Field(default=None, gt=0)
    gen_tps: float | None = Field(default=None, gt=0)
    cold_prompt_tps: float | None = Field(default=None, gt=0)
    samples: int = Field(default=0, ge=0)
    learned_at: float = 0.0

    @classmethod
    def of(cls, caps: EndpointCapabilities) -> LearnedEndpoint | None:
        """What ``caps`` knows, or None while something is still unknown (nothing half-learned is kept)."""
        if caps.identity is None or not caps.facts_known:
            return None
        return cls(base_url=caps.base_url, model=caps.model, fingerprint=caps.identity.fingerprint,
                   server=caps.identity.kind, version=caps.identity.version, structured_mode=caps.structured_mode,
                   tools_as_text=caps.tools_as_text, ttft_s=caps.ttft_s, prompt_tps=caps.prompt_tps,
                   gen_tps=caps.gen_tps, cold_prompt_tps=caps.cold_prompt_tps, samples=caps.samples,
                   learned_at=time.time())


def _key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')} {model}"


class LearnedEndpoints:
    """The file of what was learned, per endpoint (``None`` path: kept in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._records: dict[str, LearnedEndpoint] = {}
        self._loaded = False
        self._lock = asyncio.Lock()

    def get(self, base_url: str, model: str) -> LearnedEndpoint | None:
        return self._records.get(_key(base_url, model))

    def put(self, caps: EndpointCapabilities) -> bool:
        """Keeps what ``caps`` learned; False when it has nothing whole to keep."""
        record = LearnedEndpoint.of(caps)
        if record is None:
            return False
        self._records[_key(record.base_url, record.model)] = record
        return True

    async def load(self) -> None:
        """Reads the file once (in a thread); a missing or broken file, or a broken record, is nothing learned."""
        async with self._lock:
            if self._loaded or self.path is None:
                self._loaded = True
                return
            self._records = {**await asyncio.to_thread(_read, self.path), **self._records}
            self._loaded = True

    async def save(self) -> None:
        """Writes every record (in a thread; written whole, then renamed: a crash leaves the old file)."""
        if self.path is None:
            return
        async with self._lock:
            records = [r.model_dump(mode="json") for r in self._records.values()]
            try:
                await asyncio.to_thread(_write, self.path, records)
            except OSError as exc:
                log.warning("could not keep what was learned of the model servers in %s: %s", self.path, exc)


def _read(path: Path) -> dict[str, LearnedEndpoint]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s); the model servers will be learned again", path, exc)
        return {}
    entries = raw.get("endpoints") if isinstance(raw, dict) and raw.get("version") == FILE_VERSION else None
    records: dict[str, LearnedEndpoint] = {}
    for entry in entries if isinstance(entries, list) else []:
        try:
            record = LearnedEndpoint.model_validate(entry)
        except ValidationError:
            log.info("%s: a record that does not validate is ignored", path)
            continue
        records[_key(record.base_url, record.model)] = record
    return records


def _write(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps({"version": FILE_VERSION, "endpoints": records}, ensure_ascii=False, indent=1),
                       encoding="utf-8")
    os.chmod(partial, 0o600)
    partial.replace(path)


async def learn_endpoint(model: OpenAIChatModel, store: LearnedEndpoints) -> str:
    """Learns what ``model``'s endpoint can do (see the module docstring); returns what happened, in words.
    Never raises for the server's trouble (the turns learn the rest from their answers then)."""
    caps = model.capabilities
    if not caps.local:
        return "a hosted API: nothing to learn"
    await store.load()
    identity = await model.identify(priorities.LEARNING)
    if identity is None:
        return "not identified"
    kept = store.get(caps.base_url, caps.model)
    if kept is not None and identity.same_server(kept.fingerprint):
        caps.restore(mode=kept.structured_mode, tools_as_text=kept.tools_as_text, ttft_s=kept.ttft_s,
                     prompt_tps=kept.prompt_tps, gen_tps=kept.gen_tps, samples=kept.samples,
                     cold_prompt_tps=kept.cold_prompt_tps)
        return f"{identity.describe()}: known from an earlier start"
    asked: list[str] = []
    try:
        if not caps.mode_confirmed:
            await _learn_structured_mode(model)
            asked.append(f"structured output: {caps.structured_mode}")
        if not caps.tools_known:
            await _learn_tools(model, caps)
            asked.append(f"tool calls {'as text' if caps.tools_as_text else 'native'}")
    except LLMError as exc:
        log.info("%s: learning stopped (%s); turns learn the rest", caps.base_url, exc)
        return f"{identity.describe()}: {exc}"
    if store.put(caps):
        await store.save()
    return f"{identity.describe()}: " + (", ".join(asked) if asked else "known server")


async def _learn_structured_mode(model: ChatModel) -> None:
    """A one-token request asking for JSON: the server accepts the mode (then it is confirmed) or refuses it before
    generating (the backend then tries the next mode at once, in the same request: negotiation.py)."""
    caps = capabilities_of(model)
    request = ChatRequest(messages=(ChatMessage.user('{"ok": true}'),), response_format=PROBE_FORMAT,
                          max_tokens=1, temperature=0.0, priority=priorities.LEARNING)
    await complete(model, request)
    if caps is not None and not caps.mode_confirmed:
        caps.confirm_mode(caps.structured_mode)  # "text" is never refused: the last mode holds


async def _learn_tools(model: ChatModel, caps: EndpointCapabilities) -> None:
    """One short request offering the ``speak`` tool with ``tool_choice`` "auto": a real tool call, or not (prose,
    or the call written as text: then lines are asked for as plain text, llm/text_tools.py)."""
    request = ChatRequest(
        messages=(ChatMessage.system("To say something, call the speak tool."), ChatMessage.user("Say hello.")),
        tools=(PROBE_TOOL,), max_tokens=TOOL_PROBE_TOKENS, temperature=0.0, priority=priorities.LEARNING)
    completion = await complete(model, request)
    if not caps.tools_known:  # the backend learns "tools refused" from an HTTP 400 by itself
        caps.tools_as_text = not any(call.name == PROBE_TOOL.name for call in completion.message.tool_calls)
    caps.tools_known = True


async def learn_endpoints(models: list[ChatModel], store: LearnedEndpoints) -> None:
    """Learns every distinct endpoint among ``models`` (one after the other: they may share a server)."""
    from companions.llm.openai_backend import OpenAIChatModel

    seen: set[int] = set()
    for model in models:
        caps = capabilities_of(model)
        if not isinstance(model, OpenAIChatModel) or caps is None or id(caps) in seen:
            continue
        seen.add(id(caps))
        began = time.perf_counter()
        with contextlib.suppress(LLMError):
            outcome = await learn_endpoint(model, store)
            log.info("%s %s: %s (%.2f s)", caps.base_url, caps.model, outcome, time.perf_counter() - began)


async def keep_learned(models: list[ChatModel], store: LearnedEndpoints) -> None:
    """Writes what the endpoints of ``models`` know now (their speed measured since the start, too)."""
    changed = False
    for model in models:
        caps = capabilities_of(model)
        if caps is not None and caps.local:
            changed = store.put(caps) or changed
    if changed:
        await store.save()
