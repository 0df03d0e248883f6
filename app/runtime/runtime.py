"""The runtime: opens the bus and the store, starts the parts the assembly built, and shuts down in order.

The same :class:`Runtime` serves the window (``madoi``) and servers and tests (``madoi --headless``). It holds the
bus, the store and the :class:`~app.runtime.parts.Parts` (after :meth:`Runtime.start`), and nothing else: what the user
does with conversations is :attr:`Parts.conversations`, the companions' models :attr:`Parts.models`. Parts start in
order and stop in reverse; each stop is bounded so shutdown always finishes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine
from typing import TYPE_CHECKING, Any, Final

from app.cards.cast_changes import CastChanges
from app.cards.choices import use_voices
from app.llm.connection import ModelConnection, ModelFactory
from app.runtime.assembly import Setup, assemble
from app.runtime.parts import Component, Parts
from app.settings.changes import SettingsChanged
from app.settings.model import Paths, Settings, SettingsStore
from app.storage.database import ConversationStore
from app.trust.policy import use_trust_settings
from companions.common.loop_health import LagProbe
from companions.companion.cast import CastChanged
from companions.trust.policy import NOTICED, ConsentRelay
from companions.wire.bus import Bus, InProcessBus

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

STOP_TIMEOUT_S: Final = 1.5


async def unless_stopped(work: Coroutine[Any, Any, None], stopped: Awaitable[object]) -> bool:
    """Runs ``work`` until it is done (True) or ``stopped`` is done first (False: ``work`` cancelled): a start that
    SIGTERM or a closed window interrupts. A future given as ``stopped`` is left as it is."""
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(stopped)
    try:
        await asyncio.wait((task, stopper), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if stopper is not stopped:
            stopper.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        return False
    task.result()  # its exception, if it failed
    return True


class SettingsNotApplied(RuntimeError):
    """Saved settings a part could not take (the message says which and why, for the user)."""


class NotStarted(RuntimeError):
    """The runtime's parts were asked for before :meth:`Runtime.start` built them (or after it stopped)."""


class Runtime:
    """Owns the bus, the store and the parts.

    ``make_model`` replaces the settings' choice of each companion's ChatModel (the ChatModel port: a scripted
    model in tests and demos); ``only_companions`` keeps those companions only (the others run elsewhere).
    """

    def __init__(self, loaded: SettingsStore, *, make_model: ModelFactory | None = None,
                 only_companions: Collection[str] | None = None) -> None:
        self.loaded = loaded
        self.bus: Bus = InProcessBus()
        self.store = ConversationStore(self.paths.database)
        self.lag_probe = LagProbe()
        self.asker = ConsentRelay()  # the window's consent prompt connects here (RuntimeConsent)
        self._setup = Setup(loaded, self.bus, self.store, make_model,
                            frozenset(only_companions) if only_companions is not None else None, self.asker)
        self._parts: Parts | None = None
        self._models: ModelConnection | None = None  # from the assembly on: stopped even when the start was not done
        self._running: list[Component] = []
        self._following: list[Callable[[], None]] = []  # the parts' subscriptions to the settings
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
        # The default model is found from now on, in the background (a server probed, a model file loaded) while the
        # parts start: the window (and the ready line) do not wait for it; the companions' requests do.
        self._models = parts.models
        parts.models.begin(self.settings, lambda: list(parts.cast))
        for component in parts.components():
            if component not in parts.components():  # left out with a part it needs (the indexer with search)
                continue
            try:
                await component.start()
            except Exception as err:  # one part failing (a broken index file...) must not keep the app from starting
                log.exception("%s could not start", component.name)
                self.loaded.problems.append(f"{component.name} not available: {err}")
                parts = parts.without(component)  # left out (the indexer with search: it stays idle, not started)
                continue
            self._running.append(component)
            log.info("started %s", component.name)
        use_voices(self.settings, parts.cast)  # the voices the user chose over the cards'
        self._parts = parts
        self._follow_settings()
        self.started_at = time.monotonic()

    @property
    def model_pending(self) -> bool:
        """Whether the companions are waiting for their model to be found (:meth:`model_problem` is not known)."""
        return self._models is not None and self._models.resolving

    async def models_resolved(self) -> str | None:
        """Waits until the default model is found (or known missing); returns :meth:`model_problem`."""
        if self._models is not None:
            await self._models.resolved()
        return self.model_problem()

    async def apply_settings(self, settings: Settings) -> None:
        """Takes the settings the user just saved, at once: the camera is checked again when its source changed,
        the voice's rate and volume hold from the next utterance, the companions speak the new language, get a
        language model again when the LLM section changed (or their own model when only that changed) and speak
        with their chosen voice, new knowledge folders are indexed, and the bridge moves to a new port (or, where
        it stays, admits the web pages and keeps the bounds and quota now set). Other settings apply at next start.

        The settings store publishes the change (app/settings/store.py); each part follows the keys it subscribed to
        when the runtime started (:meth:`_follow_settings`).

        Raises:
            SettingsNotApplied: a part could not take its new settings (the bridge's port is taken: the old bridge
                keeps running); everything else was applied.
        """
        await self.loaded.apply(settings)

    def _follow_settings(self) -> None:
        """Subscribes the running parts to the settings they follow, in the order they take a change (the bridge
        last: when it cannot move, everything else was applied)."""
        follow = self.loaded.subscribe
        self._following = [
            follow(self._devices_follow, "camera", "voice"),
            follow(self._voice_input_follows, "voice_input"),
            follow(self._cast_speaks, "general.language"),
            follow(self._models_follow, "llm", "companions"),
            follow(self._voices_follow, "companions"),
            follow(self._approved_cards_run, "trust.cards"),
            follow(self._trust_follows, "trust"),
            follow(self._search_follows, "search.folders"),
            follow(self._bridge_follows, "bridge"),
        ]

    async def _devices_follow(self, change: SettingsChanged) -> None:
        await self.parts.devices.apply_settings(change.current)

    async def _voice_input_follows(self, change: SettingsChanged) -> None:
        voice_input = self.parts.devices.voice_input
        if voice_input is not None:
            from app.voice_input.wiring import apply_voice_input_settings

            await apply_voice_input_settings(voice_input, change.previous, change.current, self.paths.data_dir)

    async def _cast_speaks(self, change: SettingsChanged) -> None:
        parts = self.parts
        parts.cast.set_language(change.current.general.language)  # their prompts follow the interface's
        if parts.network is not None:
            parts.network.follow_cast()  # their names and texts as the network is served them, too

    async def _models_follow(self, change: SettingsChanged) -> None:
        if change.touches("llm"):
            await self.reconnect_models()
        else:
            for reason in self.parts.models.use_choices(change.previous, change.current, self.parts.cast):
                log.warning("language model: %s", reason)

    async def _voices_follow(self, change: SettingsChanged) -> None:
        use_voices(change.current, self.parts.cast)

    async def _approved_cards_run(self, change: SettingsChanged) -> None:
        await self.reload_companions()  # a card approved or revoked: it runs as now allowed

    async def _trust_follows(self, change: SettingsChanged) -> None:
        use_trust_settings(self.parts.broker.trust, change.current)  # the Privacy tab may have forgotten answers

    async def _search_follows(self, change: SettingsChanged) -> None:
        if self.parts.search is not None:
            self.parts.search.use_folders(change.current.search.folders)

    async def _bridge_follows(self, change: SettingsChanged) -> None:
        if change.touches("bridge.host", "bridge.port", "bridge.token"):
            problem = await self._move_bridge(change.current)
            if problem is not None:
                raise SettingsNotApplied(problem)
        elif self.parts.bridge is not None:
            from app.bridge.factory import follow_settings

            follow_settings(self.parts.bridge, change.current)  # the web pages it admits, its bounds and quota

    async def reload_companions(self) -> CastChanged:
        """Takes the card files again (edited, made, imported, approved or removed): each changed companion is in
        the conversation from its next turn (app/cards/cast_changes.py)."""
        parts = self.parts
        changes = CastChanges(self.loaded, self.bus, parts.cast, parts.conversation_manager,
                              conversation=lambda: parts.conversations.active_id, only=self._setup.only_companions)
        return await changes.reload()

    async def _move_bridge(self, settings: Settings) -> str | None:
        """Starts the bridge where ``settings`` say, then stops the old one (which keeps running when the new one
        cannot listen; on the same address, with a new token, the old one stops first); returns why the new one
        could not start, or None."""
        from app.bridge import BridgeConfigError, build_bridge

        parts = self.parts
        old = parts.bridge
        try:
            # as at the start (assembly.py): no client speaks as a companion of this app or as what it noticed
            new = build_bridge(self.bus, parts.broker, settings,
                               reserved_ids=lambda: {*parts.cast.companions, NOTICED.id},
                               roster=parts.conversation_manager, guests=parts.cast.guests)
        except BridgeConfigError as err:
            return f"bridge not moved: {err}"
        if old is not None and (not old.running or new is None
                                or (old.host, old.port) == (settings.bridge.host, settings.bridge.port)):
            await self._stop_bridge(old)
            old = None
        if new is not None:
            await new.start()
            if not new.running:
                await new.stop()
                still = f"; it keeps listening on port {old.port}" if old is not None else ""
                return f"{new.error}{still}"
            self._running.append(new)
        if old is not None:
            await self._stop_bridge(old)
        self._parts = dataclasses.replace(self.parts, bridge=new)
        return None

    async def _stop_bridge(self, bridge: Component) -> None:
        await bridge.stop()
        if bridge in self._running:
            self._running.remove(bridge)
        self._parts = dataclasses.replace(self.parts, bridge=None)

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
        """Stops the parts in reverse order, then the bus and the store; bounded by ``STOP_TIMEOUT_S`` each.
        The model's search (or its loading) is cancelled first: stopping never waits on a model server."""
        if self._models is not None:
            self._models.cancel()
        for component in reversed(self._running):
            began = time.perf_counter()
            try:
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await component.stop()
            except TimeoutError:  # left behind: the process ends without it (app/main.py's exit_now)
                log.warning("%s did not stop within %.1f s", component.name, STOP_TIMEOUT_S)
            except Exception:
                log.exception("stopping %s failed", component.name)
            log.debug("stopped %s in %.3f s", component.name, time.perf_counter() - began)
        self._running = []
        while self._following:
            self._following.pop()()  # the parts stop following the settings
        if self._models is not None:  # the model run by Madoi stops; what was learned of the servers is kept
            try:
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await self._models.aclose()
            except Exception:
                log.exception("stopping the model connection failed")
            self._models = None
        self._parts = None
        await self.lag_probe.stop()
        await self.bus.aclose()
        await self.store.close()
