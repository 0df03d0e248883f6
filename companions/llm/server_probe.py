"""Which local model server answers at a base URL, and how many requests it runs at once - asked once, briefly.

llama.cpp's ``llama-server`` tells its slot count at ``GET /props`` (at the server root, not under /v1). The other
servers are told apart by ``owned_by`` in ``GET /v1/models``: llama-cpp-python says "me" (and runs one request at
a time, cutting off the one in flight when another arrives: docs/real-servers.md), vLLM says "vllm" (many parallel
requests), Ollama "library", LM Studio "organization_owner". Anything else, or no answer within the timeout, is
an unknown local server: one request at a time, the safe default (a server with one slot queues parallel requests
anyway, and a client-side queue lets a reply go before votes).

The probe runs while the caller holds the endpoint's only slot, so it never interrupts a request of ours.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S: Final = 1.0
_OWNERS: Final[dict[str, tuple[str, int | None]]] = {
    "me": ("llama-cpp-python", 1),
    "vllm": ("vLLM", None),
    "library": ("Ollama", 1),
    "organization_owner": ("LM Studio", 1),
    "llamacpp": ("llama.cpp", 1),
}


@dataclass(frozen=True)
class ServerFacts:
    kind: str | None  # None: not recognised
    slots: int | None  # None: unlimited


UNKNOWN_LOCAL: Final = ServerFacts(None, 1)


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port`` (where llama.cpp serves /props)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


async def probe_server(
    client: openai.AsyncOpenAI, base_url: str, *, timeout_s: float = PROBE_TIMEOUT_S
) -> ServerFacts:
    """What kind of server is at ``base_url`` and how many slots it has, asked through the model's own
    ``client`` (its key, no retries); never raises."""
    props = await _get_json(client, f"{server_root(base_url)}/props", timeout_s)
    slots = props.get("total_slots") if isinstance(props, dict) else None
    if isinstance(slots, int) and slots > 0:
        return ServerFacts("llama.cpp", slots)
    models = await _get_json(client, f"{base_url.rstrip('/')}/models", timeout_s)
    data = models.get("data") if isinstance(models, dict) else None
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    owner = first.get("owned_by")
    return ServerFacts(*_OWNERS[owner]) if isinstance(owner, str) and owner in _OWNERS else UNKNOWN_LOCAL


async def _get_json(client: openai.AsyncOpenAI, url: str, timeout_s: float) -> Any:
    import openai

    try:
        return await client.get(url, cast_to=object, options={"timeout": timeout_s})
    except (openai.OpenAIError, ValueError) as exc:
        log.debug("%s: %s", url, type(exc).__name__)
        return None
