"""The runtime: opens the bus and the store, starts the parts the assembly built, and shuts down in order.

The same :class:`Runtime` serves the window (``madoi``) and servers and tests (``madoi --headless``). It holds the
bus, the store and the :class:`~app.parts.Parts` (after :meth:`Runtime.start`), and nothing else: what the user
does with conversations is :attr:`Parts.conversations`, the companions' models :attr:`Parts.models`. Parts start in
order and stop in reverse; each stop is bounded so shutdown always finishes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from typing import Final

from app.assembly import Setup, assemble
from app.model_connection import ModelConnection, ModelFactory
from app.parts import Component, Parts
from app.settings import LoadedSettings, Paths, Settings
from app.storage import ConversationStore
from companions.bus import Bus, InProcessBus
from companions.loop_health import LagProbe

log = logging.getLogger(__name__)

STOP_TIMEOUT_S: Final = 1.5


class NotStarted(RuntimeError):
    """The runtime's parts were asked for before :meth:`Runtime.start` built them (or after it stopped)."""


class Runtime:
    """Owns the bus, the store and the parts.

    ``make_model`` replaces the settings' choice of each companion's ChatModel (the ChatModel port: a scripted
    model in tests and demos); ``only_companions`` keeps those companions only (the others run elsewhere).
    """

    def __init__(self, loaded: LoadedSettings, *, make_model: ModelFactory | None = None,
                 only_companions: Collection[str] | None = None) -> None:
        self.loaded = loaded
        self.bus: Bus = InProcessBus()
        self.store = ConversationStore(self.paths.database)
        self.lag_probe = LagProbe()
        self._setup = Setup(loaded, self.bus, self.store, make_model,
                            frozenset(only_companions) if only_companions is not None else None)
        self._parts: Parts | None = None
        self._running: list[Component] = []
        self.started_at: float | None = None

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    @property
    def paths(self) -> Paths:
        return self.loaded.paths

    @property
    def started(self) -> bool:
        return self._parts is not None

    @property
    def parts(self) -> Parts:
        """The running parts; raises :class:`NotStarted` before :meth:`start` (views ask only once attached)."""
        if self._parts is None:
            raise NotStarted("the runtime has not started")
        return self._parts

    async def start(self) -> None:
        if self._parts is not None:
            return
        self.paths.ensure()
        await self.store.open()
        self.lag_probe.start()
        parts = await assemble(self._setup)
        for component in parts.components():
            if component not in parts.components():  # left out with a part it needs (the indexer with search)
                continue
            try:
                await component.start()
            except Exception as err:  # one part failing (a broken index file...) must not keep the app from starting
                log.exception("%s could not start", component.name)
                self.loaded.problems.append(f"{component.name} not available: {err}")
                parts = parts.without(component)
                parts.conversations.indexing = parts.indexer
                continue
            self._running.append(component)
            log.info("started %s", component.name)
        self._parts = parts
        self.started_at = time.monotonic()

    async def apply_settings(self, settings: Settings) -> None:
        """Takes the settings the user just saved: the camera is checked again when its source changed, the
        companions speak the new language and get a language model again when the LLM section changed. Other
        sections apply at next start."""
        previous, self.loaded.settings = self.loaded.settings, settings
        if self._parts is None:
            return
        await self._parts.devices.apply_settings(settings)
        if settings.general.language != previous.general.language:
            self._parts.cast.set_language(settings.general.language)  # their prompts follow the interface's
        if settings.llm != previous.llm:
            await self.reconnect_models()

    async def reconnect_models(self) -> str | None:
        """Looks for the language model again (settings, then a local server); returns :meth:`model_problem`."""
        if self._parts is None:
            return None
        for problem in await self._parts.models.reconnect(self.settings, self._parts.cast):
            log.warning("language model: %s", problem)
        return self.model_problem()

    def model_problem(self) -> str | None:
        """Why no companion can talk (no language model could be reached or built), or None when one can (and
        before the companions exist). The window shows its first-run panel with this reason."""
        return ModelConnection.problem(self._parts.cast) if self._parts is not None else None

    async def stop(self) -> None:
        """Stops the parts in reverse order, then the bus and the store; bounded by ``STOP_TIMEOUT_S`` each."""
        for component in reversed(self._running):
            began = time.perf_counter()
            try:
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await component.stop()
            except Exception:
                log.exception("stopping %s failed", component.name)
            log.debug("stopped %s in %.3f s", component.name, time.perf_counter() - began)
        self._running = []
        self._parts = None
        await self.lag_probe.stop()
        await self.bus.aclose()
        await self.store.close()
