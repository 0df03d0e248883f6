"""Which model server answers at a base URL, its version and how many requests it runs at once: asked with GETs.

Identification costs no completion: ``GET /v1/models`` (which every OpenAI-compatible server answers) says who owns
the models, and that names the server and where it tells its version:

| ``owned_by`` | server | where its version is |
| --- | --- | --- |
| ``me`` | llama-cpp-python | ``GET /openapi.json``: ``info.title`` "🦙 llama.cpp Python API", ``info.version`` |
| ``llamacpp`` | llama.cpp ``llama-server`` | ``GET /props``: ``total_slots``, ``build_info`` |
| ``library`` | Ollama | ``GET /api/version``: ``{"version": "0.5.7"}`` |
| ``vllm`` | vLLM | ``GET /version``: ``{"version": "0.6.3"}`` |
| ``organization_owner`` | LM Studio | (none) |
| ``madoi-test`` | Madoi's own test and demo server | (none) |

A server whose owner says nothing known is asked at all four addresses at once (GETs, no model work), and is
recognised by what answers. Anything else is an unknown local server: one request at a time, the safe default.
The answers make a :class:`ServerIdentity` whose ``fingerprint`` changes when the server, its version, its slots or
its model list change, so what was learned about an endpoint (companions/llm/learning.py) is learned again then.

The probe runs while the caller holds the endpoint's only slot, so it never interrupts a request of ours.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S: Final = 1.0
UNLISTED: Final = "?"  # the fingerprint's model part when the server did not list its models
LLAMA_CPP_PYTHON: Final = "llama-cpp-python"
LLAMA_CPP: Final = "llama.cpp"
OLLAMA: Final = "Ollama"
VLLM: Final = "vLLM"
LM_STUDIO: Final = "LM Studio"
MADOI_TEST: Final = "Madoi test server"  # companions/testing/openai_server: tests, demos (``--demo``), benchmarks
# owned_by in GET /v1/models -> (server, its slots: None = parallel)
_OWNERS: Final[dict[str, tuple[str, int | None]]] = {
    "me": (LLAMA_CPP_PYTHON, 1),
    "vllm": (VLLM, None),
    "library": (OLLAMA, 1),
    "organization_owner": (LM_STUDIO, 1),
    "llamacpp": (LLAMA_CPP, 1),
    "madoi-test": (MADOI_TEST, 1),  # its profile may play any server: one request at a time, as an unknown one
}
_LLAMA_CPP_PYTHON_TITLE: Final = "llama.cpp python api"


@dataclass(frozen=True)
class ServerIdentity:
    """What GETs told about a server: its kind (None: not recognised), version, slots (None: parallel) and the
    model ids it lists."""

    kind: str | None
    slots: int | None
    version: str | None = None
    # None: not listed this time. llama-cpp-python answers GET /v1/models only once the request it is running ends
    # (seen at a second start, while it still ran what the stopped Madoi had asked): the probe's timeout passes.
    models: tuple[str, ...] | None = ()

    @property
    def fingerprint(self) -> str:
        """Changes when the server, its version, its slots or its models change (then learn it again)."""
        listed = UNLISTED if self.models is None else hashlib.sha256(
            "\n".join(sorted(self.models)).encode()).hexdigest()[:16]
        return f"{self.kind or 'unknown'}|{self.version or '-'}|{self.slots or 'parallel'}|{listed}"

    def same_server(self, fingerprint: str) -> bool:
        """Whether ``fingerprint`` (an earlier identification's) names this server: the same kind, version, slots
        and models, the models compared only where both identifications could list them."""
        mine, theirs = self.fingerprint.rsplit("|", 1), fingerprint.rsplit("|", 1)
        if len(theirs) != 2 or mine[0] != theirs[0]:
            return False
        return UNLISTED in (mine[1], theirs[1]) or mine[1] == theirs[1]

    def describe(self) -> str:
        name = self.kind or "an unknown server"
        version = f" {self.version}" if self.version else ""
        return f"{name}{version}, {f'{self.slots} slot(s)' if self.slots else 'parallel'}"


UNKNOWN_LOCAL: Final = ServerIdentity(None, 1)


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port`` (where llama.cpp serves /props)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


async def probe_server(
    client: openai.AsyncOpenAI, base_url: str, *, timeout_s: float = PROBE_TIMEOUT_S
) -> ServerIdentity:
    """What kind of server is at ``base_url``, its version and its slots, asked through the model's own ``client``
    (its key, no retries); never raises."""
    root = server_root(base_url)
    listing = await _get_json(client, f"{base_url.rstrip('/')}/models", timeout_s)
    data = listing.get("data") if isinstance(listing, dict) else None
    entries = [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    models = tuple(str(e["id"]) for e in entries if isinstance(e.get("id"), str)) if listing is not None else None
    owner = entries[0].get("owned_by") if entries else None
    known = _OWNERS.get(owner) if isinstance(owner, str) else None
    if known is not None:
        kind, slots = known
        version, told_slots = await _version(client, root, kind, timeout_s)
        return ServerIdentity(kind, told_slots or slots, version, models)
    # Nothing known owns the models: ask where each server tells what it is (GETs only, at once).
    props, openapi, ollama, vllm = await asyncio.gather(*(
        _get_json(client, f"{root}{path}", timeout_s) for path in ("/props", "/openapi.json", "/api/version",
                                                                     "/version")))
    slots = props.get("total_slots") if isinstance(props, dict) else None
    if isinstance(slots, int) and slots > 0:
        return ServerIdentity(LLAMA_CPP, slots, _text(props, "build_info"), models)
    info = openapi.get("info") if isinstance(openapi, dict) else None
    if isinstance(info, dict) and _LLAMA_CPP_PYTHON_TITLE in str(info.get("title", "")).casefold():
        return ServerIdentity(LLAMA_CPP_PYTHON, 1, _text(info, "version"), models)
    if _text(ollama, "version") is not None:
        return ServerIdentity(OLLAMA, 1, _text(ollama, "version"), models)
    if _text(vllm, "version") is not None:
        return ServerIdentity(VLLM, None, _text(vllm, "version"), models)
    return ServerIdentity(None, 1, None, models)


async def _version(client: openai.AsyncOpenAI, root: str, kind: str, timeout_s: float) -> tuple[str | None, int | None]:
    """The version a known server tells (and llama.cpp's slots)."""
    if kind == LLAMA_CPP_PYTHON:
        openapi = await _get_json(client, f"{root}/openapi.json", timeout_s)
        info = openapi.get("info") if isinstance(openapi, dict) else None
        return _text(info, "version"), None
    if kind == LLAMA_CPP:
        props = await _get_json(client, f"{root}/props", timeout_s)
        slots = props.get("total_slots") if isinstance(props, dict) else None
        return _text(props, "build_info"), slots if isinstance(slots, int) and slots > 0 else None
    if kind == OLLAMA:
        return _text(await _get_json(client, f"{root}/api/version", timeout_s), "version"), None
    if kind == VLLM:
        return _text(await _get_json(client, f"{root}/version", timeout_s), "version"), None
    return None, None


def _text(value: Any, key: str) -> str | None:
    found = value.get(key) if isinstance(value, dict) else None
    return found[:80] if isinstance(found, str) and found else None


async def _get_json(client: openai.AsyncOpenAI, url: str, timeout_s: float) -> Any:
    import openai

    try:
        return await client.get(url, cast_to=object, options={"timeout": timeout_s})
    except (openai.OpenAIError, ValueError) as exc:
        log.debug("%s: %s", url, type(exc).__name__)
        return None
