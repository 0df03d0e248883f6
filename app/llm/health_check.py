"""Asks a model server that stopped answering whether it is back, so that what waits for it goes by itself.

While the model health record (companions/llm/health.py) says an endpoint is down (unreachable, gone, too slow),
:class:`ModelHealthCheck` sends ``GET {endpoint}/models`` every few seconds: at first every
:data:`FIRST_INTERVAL_S`, then less often, up to every :data:`LONGEST_INTERVAL_S`; each request bounded by
:data:`CHECK_TIMEOUT_S`. Any HTTP answer below 500 (a model list, even "wrong key") means the server is there again:
the record hears it answered, and says :class:`~companions.llm.health.ModelBack` (the window sends the message that
waited). The checks of an endpoint stop as soon as it is back, whoever found out (a companion's request may).
No key is sent: the answer, not its content, is what counts.

Given the bus, it also looks, as soon as the user's message opens a conversation, whether each model server on this
machine or network that the companions used still accepts connections (a TCP connect, no request; at most
:data:`QUICK_TIMEOUT_S`): a server that crashed since is known at once, not after the companion's preparation and
its retries (measured: the first model request of a turn came 1.1-1.8 s after the message, the recall of memories
first).

Given the settings, it forgets what it knew when the language model settings change (a URL corrected, another
model chosen): the companions' next requests go to the models chosen now, and a message that waited goes with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final, Protocol
from urllib.parse import urlsplit

import httpx

from companions.common.tasks import TaskSet
from companions.conversation.readmodel import ConversationChanged
from companions.llm.capabilities import is_local_url
from companions.llm.health import HealthEvent, ModelHealth, ModelTrouble, model_health
from companions.llm.types import LLMError
from companions.wire.bus import Bus, BusItem, Subscription

if TYPE_CHECKING:
    from app.settings.changes import SettingsChanged

log = logging.getLogger(__name__)

FIRST_INTERVAL_S: Final = 2.0
LONGEST_INTERVAL_S: Final = 15.0
BACKOFF: Final = 1.5
CHECK_TIMEOUT_S: Final = 3.0
QUICK_TIMEOUT_S: Final = 0.5

Probe = Callable[[str], Awaitable[bool]]
"""Whether the server of an endpoint answers (a test may give its own)."""


class SettingsSource(Protocol):
    """The settings store (app/settings/store.py ``SettingsStore``): who follows a change of some keys."""

    def subscribe(self, listener: Callable[[SettingsChanged], Awaitable[None]], *keys: str) -> Callable[[], None]:
        ...


async def answers(endpoint: str, timeout_s: float = CHECK_TIMEOUT_S) -> bool:
    """Whether ``GET {endpoint}/models`` gets an HTTP answer below 500 within ``timeout_s``."""
    try:
        async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
            response = await client.get(f"{endpoint.rstrip('/')}/models")
    except httpx.HTTPError as err:
        log.debug("%s is still down: %s", endpoint, err)
        return False
    return response.status_code < 500


async def refuses_connections(endpoint: str, timeout_s: float = QUICK_TIMEOUT_S) -> bool:
    """Whether the host of ``endpoint`` refuses a TCP connection (nothing listens there); False when it accepts one
    or does not say within ``timeout_s`` (a slow answer is not a refusal)."""
    parts = urlsplit(endpoint)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        async with asyncio.timeout(timeout_s):
            _, writer = await asyncio.open_connection(parts.hostname or "127.0.0.1", port)
    except ConnectionRefusedError:
        return True
    except TimeoutError:
        return False
    except OSError as err:  # "localhost": one refusal per address, in one error
        return f"[Errno {errno.ECONNREFUSED}]" in str(err)
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return False


class ModelHealthCheck:
    """A runtime component (start/stop): checks, while an endpoint is down, whether it is back (module docstring)."""

    name = "model-health-check"

    def __init__(self, bus: Bus | None = None, health: ModelHealth = model_health, *,
                 settings: SettingsSource | None = None, probe: Probe = answers,
                 first_interval_s: float = FIRST_INTERVAL_S, longest_interval_s: float = LONGEST_INTERVAL_S) -> None:
        self._bus = bus
        self._settings = settings
        self._unfollow_settings: Callable[[], None] | None = None
        self._subscription: Subscription | None = None
        self._health = health
        self._probe = probe
        self._first = first_interval_s
        self._longest = longest_interval_s
        self._tasks = TaskSet("model-health-check")
        self._checking: set[str] = set()
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def checking(self) -> frozenset[str]:
        """The endpoints being checked now."""
        return frozenset(self._checking)

    async def start(self) -> None:
        if self._unsubscribe is None:
            self._tasks = TaskSet("model-health-check")  # a component stopped and started again checks again
            self._unsubscribe = self._health.subscribe(self._heard)
            for trouble in self._health.troubles:
                self._heard(trouble)
        if self._settings is not None and self._unfollow_settings is None:
            self._unfollow_settings = self._settings.subscribe(self._models_chosen, "llm", "companions")
        if self._bus is not None and self._subscription is None:
            self._subscription = self._bus.subscribe("events", self._on_event, name="model-health-check",
                                                     direct=True)

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        if self._unfollow_settings is not None:
            self._unfollow_settings()
            self._unfollow_settings = None
        await self._tasks.aclose()
        self._checking.clear()

    def _heard(self, event: HealthEvent) -> None:
        if isinstance(event, ModelTrouble) and event.down and event.endpoint not in self._checking:
            self._checking.add(event.endpoint)
            self._tasks.spawn(self._until_back(event.endpoint), name=f"model-health-check:{event.endpoint}")

    async def _models_chosen(self, change: SettingsChanged) -> None:
        # Once the runtime, following the same change after this, gave the companions their new models (they wait
        # for them): the next loop turn.
        self._tasks.spawn(self._forget(), name="model-health-forget")

    async def _forget(self) -> None:
        await asyncio.sleep(0)
        self._health.clear()

    def _on_event(self, item: BusItem) -> None:
        if isinstance(item, ConversationChanged) and item.change == "started":
            for endpoint in self._health.endpoints:
                if is_local_url(endpoint) and not self._health.is_down(endpoint):
                    self._tasks.spawn(self._look(endpoint), name=f"model-health-look:{endpoint}")

    async def _look(self, endpoint: str) -> None:
        if await refuses_connections(endpoint) and not self._health.is_down(endpoint):
            self._health.failed(LLMError(f"cannot reach {endpoint} (connection refused); is the server running?",
                                         kind="unreachable", cause="connection-refused", endpoint=endpoint))

    async def _until_back(self, endpoint: str) -> None:
        interval = self._first
        try:
            while self._health.is_down(endpoint):
                await asyncio.sleep(interval)
                if not self._health.is_down(endpoint):
                    return  # a companion's request found it back first
                if await self._probe(endpoint):
                    self._health.answered(endpoint)
                    return
                interval = min(self._longest, interval * BACKOFF)
        finally:
            self._checking.discard(endpoint)
