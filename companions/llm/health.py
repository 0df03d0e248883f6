"""Whether each model endpoint answers: one :class:`ModelTrouble` when it stops, one :class:`ModelBack` when it is back.

Every request a backend makes tells :data:`model_health` how it went (companions/llm/openai_backend.py): a failure
with its :data:`~companions.llm.types.LLMErrorKind`, or an answer. The record is per endpoint (base URL) and says a
change once: the companions' three requests that find the same server gone make one :class:`ModelTrouble`, not
three, and the first answer after it one :class:`ModelBack`. The conversation manager puts both on its bus's
``events`` topic (:func:`publish_model_health`), where the window follows them; a health check (app/llm/) asks a
server that is down whether it is back.

The record is the process's, as the endpoints' capabilities are (companions/llm/capabilities.py): every model object
of one endpoint shares it, whoever built it. Its methods run on the event loop's thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from companions.llm.types import MODEL_DOWN_KINDS, ConnectionCause, LLMError, LLMErrorKind
from companions.wire.bus import Bus, LocalEvent

log = logging.getLogger(__name__)


def endpoint_key(base_url: str) -> str:
    """The one spelling of an endpoint: its base URL without a trailing slash."""
    return base_url.rstrip("/")


def host_of(endpoint: str) -> str:
    """``host:port`` of an endpoint (``127.0.0.1:8080``), or the endpoint itself when it is no URL."""
    parts = urlsplit(endpoint)
    return parts.netloc or endpoint


@dataclass(frozen=True)
class ModelTrouble(LocalEvent):
    """The model at ``endpoint`` failed: ``kind`` says how in the person's terms, ``cause`` why a connection failed
    (when known), ``detail`` the backend's own words (English, for the log and a tooltip)."""

    endpoint: str
    kind: LLMErrorKind
    detail: str
    cause: ConnectionCause = ""

    @property
    def down(self) -> bool:
        """Whether the model is not answering at all (nothing sent to it can succeed until it is back)."""
        return self.kind in MODEL_DOWN_KINDS

    @property
    def host(self) -> str:
        return host_of(self.endpoint)


@dataclass(frozen=True)
class ModelBack(LocalEvent):
    """The model at ``endpoint`` answers again, after a :class:`ModelTrouble`."""

    endpoint: str


HealthEvent = ModelTrouble | ModelBack
HealthListener = Callable[[HealthEvent], None]


class ModelHealth:
    """The endpoints in trouble, and who is told of each change (see the module docstring)."""

    def __init__(self) -> None:
        self._troubles: dict[str, ModelTrouble] = {}
        self._known: dict[str, None] = {}  # every endpoint heard of, in order
        self._listeners: list[HealthListener] = []

    @property
    def endpoints(self) -> tuple[str, ...]:
        """Every endpoint a request went to (it answered or failed), in the order first heard of."""
        return tuple(self._known)

    @property
    def troubles(self) -> tuple[ModelTrouble, ...]:
        """The endpoints in trouble now, each with its latest trouble."""
        return tuple(self._troubles.values())

    def trouble(self, endpoint: str) -> ModelTrouble | None:
        return self._troubles.get(endpoint_key(endpoint))

    def is_down(self, endpoint: str) -> bool:
        trouble = self.trouble(endpoint)
        return trouble is not None and trouble.down

    def failed(self, error: LLMError) -> None:
        """A request to ``error.endpoint`` failed (an error that names no endpoint is not an endpoint's trouble).
        Listeners hear of it when the endpoint was fine or its trouble changed kind."""
        if error.endpoint is None:
            return
        trouble = ModelTrouble(endpoint_key(error.endpoint), error.kind, str(error), error.cause)
        self._known[trouble.endpoint] = None
        before = self._troubles.get(trouble.endpoint)
        self._troubles[trouble.endpoint] = trouble
        if before is None or (before.kind, before.cause) != (trouble.kind, trouble.cause):
            log.warning("model trouble at %s (%s): %s", trouble.endpoint, trouble.kind, trouble.detail)
            self._tell(trouble)

    def answered(self, endpoint: str) -> None:
        """``endpoint`` answered a request (or a health check): listeners hear it is back if it was in trouble."""
        key = endpoint_key(endpoint)
        self._known[key] = None
        if self._troubles.pop(key, None) is not None:
            log.info("the model at %s answers again", key)
            self._tell(ModelBack(key))

    def clear(self) -> None:
        """Nothing is known of any endpoint's health any more (the models were chosen again: the companions may talk
        to other servers now); listeners hear each endpoint in trouble is no longer (a request that fails again
        says so again). The endpoints heard of are forgotten too: a server no longer used (the address of a model
        runner started anew) must not be looked at, found gone and hold the user's messages."""
        self._known.clear()
        for endpoint in list(self._troubles):
            del self._troubles[endpoint]
            self._tell(ModelBack(endpoint))

    def subscribe(self, listener: HealthListener) -> Callable[[], None]:
        """Calls ``listener`` with every change from now on; returns what unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def forget(self) -> None:
        """Forgets every endpoint and trouble, telling no one (tests; a process that starts over)."""
        self._troubles.clear()
        self._known.clear()

    def _tell(self, event: HealthEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("a model health listener failed")


model_health = ModelHealth()
"""The process's record (see the module docstring)."""


def publish_model_health(bus: Bus, health: ModelHealth = model_health) -> Callable[[], None]:
    """Puts every change of ``health`` on ``bus`` (``events``); returns what stops it."""
    return health.subscribe(bus.publish)
