"""The runtime: assembles the core and the devices, owns every task, and shuts down in order.

The same :class:`Runtime` serves the window (``madoi``) and servers and tests (``madoi --headless``).
Components start in order and stop in reverse; each stop is bounded so shutdown always finishes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from app.assembly import ModelFactory, build_components, reconnect_models
from app.settings import LoadedSettings, Settings
from app.storage import ConversationStore
from companions.bus import Bus, BusItem, InProcessBus, LocalEvent, Subscription
from companions.llm.unavailable import UnavailableModel
from companions.loop_health import LagProbe
from companions.protocol import Message, State
from companions.tasks import TaskSet

if TYPE_CHECKING:
    from app.bridge import BridgeServer
    from app.conversation_indexing import ConversationIndexer
    from app.devices.wiring import Devices
    from app.search_service import SearchService
    from companions.cast import CompanionCast
    from companions.conversation import ConversationManager
    from companions.llm.detect import ModelResolution
    from companions.network.link import NetworkLink
    from companions.query_broker import QueryBroker
    from companions.search.engine import SearchEngine

log = logging.getLogger(__name__)

STOP_TIMEOUT_S: Final = 1.5


class Component(Protocol):
    """Something the runtime starts after the bus and storage, and stops before them."""

    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


ComponentFactory = Callable[["Runtime"], Awaitable[list[Component]]]


@dataclass(frozen=True)
class MessageRevised(LocalEvent):
    """Published on ``events`` when the user edited (``text``) or deleted (``text`` None) a message."""

    message_id: str
    text: str | None


@dataclass(frozen=True)
class ActiveConversationChanged(LocalEvent):
    """Published on the ``events`` topic when the user's active conversation changes (new, switched, deleted).

    Everything published before it belongs to ``previous``; views showing the conversation reload on it.
    """

    conversation_id: int
    previous: int | None


class Runtime:
    """Owns the bus, the store, the active conversation and every component.

    ``make_model`` replaces the settings' choice of each companion's ChatModel (the ChatModel port: a scripted
    model in tests and demos); ``extra`` adds components started after the assembled ones.
    """

    def __init__(self, loaded: LoadedSettings, *, extra: ComponentFactory | None = None,
                 make_model: ModelFactory | None = None, only_companions: Collection[str] | None = None) -> None:
        self.loaded = loaded
        self.settings = loaded.settings
        self.paths = loaded.paths
        self.bus: Bus = InProcessBus()
        self.store = ConversationStore(self.paths.database)
        self.lag_probe = LagProbe()
        self.tasks = TaskSet("runtime")
        self.components: list[Component] = []
        self.conversation_id: int | None = None
        # Set by the assembly (app.assembly.build_components) when the runtime starts:
        self.query_broker: QueryBroker | None = None
        self.model_resolution: ModelResolution | None = None
        self.cast: CompanionCast | None = None
        self.conversation: ConversationManager | None = None
        self.bridge: BridgeServer | None = None
        self.devices: Devices | None = None
        self.search: SearchService | None = None
        self.conversation_indexer: ConversationIndexer | None = None
        self.search_engine: SearchEngine | None = None
        self.network: NetworkLink | None = None
        self.only_companions = frozenset(only_companions) if only_companions is not None else None
        self._extra = extra
        self.make_model = make_model
        self._subscriptions: list[Subscription] = []
        self._started = False
        self.started_at: float | None = None

    async def start(self) -> None:
        if self._started:
            return
        self.paths.ensure()
        await self.store.open()
        self.conversation_id = await self.store.latest_conversation() or await self.store.create_conversation()
        self._subscriptions.append(
            self.bus.subscribe(("messages", "states"), self._record, name="storage", maxsize=10_000,
                               overflow="drop_newest")
        )
        self.lag_probe.start()
        self.components = await build_components(self)
        if self._extra is not None:
            self.components += await self._extra(self)
        for component in self.components:
            try:
                await component.start()
            except Exception as err:  # one part failing (a broken index file...) must not keep the app from starting
                log.exception("%s could not start", component.name)
                self.loaded.problems.append(f"{component.name} not available: {err}")
                self._forget(component)
                continue
            log.info("started %s", component.name)
        self._started = True
        self.started_at = time.monotonic()

    def _forget(self, component: Component) -> None:
        """A component that failed to start is no longer offered (views then say it is not available)."""
        if component is self.search:
            self.search = None
            self.search_engine = None
        if component is self.bridge:
            self.bridge = None
        if component is self.conversation_indexer:
            self.conversation_indexer = None

    async def _record(self, item: BusItem) -> None:
        conversation = self.conversation_id
        if conversation is None:
            return
        if isinstance(item, Message):
            await self.store.add_message(conversation, item)
        elif isinstance(item, State):
            await self.store.add_state(conversation, item)

    async def revise_message(self, message_id: str, text: str | None) -> None:
        """Edits (``text``) or deletes (None) a message of the active conversation, as the user asked: the stored
        conversation, every companion's memory and the conversation's history follow, then the views
        (``MessageRevised``). A turn in progress is stopped first: it was built on the old words."""
        if self.conversation_id is None:
            raise RuntimeError("no conversation is open")
        if self.conversation is not None:
            await self.conversation.stop_conversation()
            self.conversation.revise_message(message_id, text)
        await self.store.revise_message(self.conversation_id, message_id, text)
        for companion in (self.cast.companions.values() if self.cast is not None else ()):
            await companion.memory.revise(message_id, text)
        self.bus.publish(MessageRevised(message_id, text))

    async def new_conversation(self) -> int:
        await self._leave()
        self._activate(await self.store.create_conversation())
        assert self.conversation_id is not None
        return self.conversation_id

    async def switch_conversation(self, conversation_id: int) -> None:
        if conversation_id == self.conversation_id:
            return
        await self._leave()
        self._activate(conversation_id)

    async def delete_conversation(self, conversation_id: int) -> int:
        """Deletes a stored conversation (messages and votes) and removes it from the search index.

        When it is the active one, the most recently updated other conversation becomes active, or a new empty
        one when none is left. Returns the active conversation's id.
        """
        if conversation_id == self.conversation_id:
            await self._leave(index=False)
            remaining = [c.id for c in await self.store.list_conversations() if c.id != conversation_id]
            self._activate(remaining[0] if remaining else await self.store.create_conversation())
        await self.store.delete_conversation(conversation_id)
        if self.conversation_indexer is not None:
            await self.conversation_indexer.forget(conversation_id)
        assert self.conversation_id is not None
        return self.conversation_id

    async def _leave(self, *, index: bool = True) -> None:
        """Ends the running conversation and lets everything said in it be stored before the switch."""
        if self.conversation is not None:
            await self.conversation.stop_conversation()  # a reply in the making would land in the next one
        await self.bus.drain()
        if index:
            self._leaving(self.conversation_id)

    def _activate(self, conversation_id: int) -> None:
        previous, self.conversation_id = self.conversation_id, conversation_id
        self.bus.publish(ActiveConversationChanged(conversation_id, previous))

    def _leaving(self, conversation_id: int | None) -> None:
        """The conversation the user leaves becomes searchable with everything said in it."""
        if conversation_id is not None and self.conversation_indexer is not None:
            self.conversation_indexer.request(conversation_id)

    async def apply_settings(self, settings: Settings) -> None:
        """Takes the settings the user just saved: the camera is checked again when its source changed, and the
        companions get a language model again when the LLM section changed. Other sections apply at next start."""
        previous, self.settings = self.settings, settings
        self.loaded.settings = settings
        if self.devices is not None:
            await self.devices.apply_settings(settings)
        if settings.llm != previous.llm:
            await self.reconnect_models()

    async def reconnect_models(self) -> str | None:
        """Looks for the language model again (settings, then a local server); returns :meth:`model_problem`."""
        for problem in await reconnect_models(self):
            log.warning("language model: %s", problem)
        return self.model_problem()

    def model_problem(self) -> str | None:
        """Why no companion can talk (no language model could be reached or built), or None when one can.

        The window shows its first-run panel with this reason; None as well before the companions exist.
        """
        cast = self.cast
        if cast is None or not cast.companions:
            return None
        unavailable = [c.model for c in cast.companions.values() if isinstance(c.model, UnavailableModel)]
        if len(unavailable) < len(cast.companions):
            return None
        return unavailable[0].reason

    def send_user_message(self, text: str, to: list[str] | None = None) -> Message:
        """Publishes a message from the user; it is stored and delivered to the companions by the bus."""
        message = Message.create(from_=self.settings.general.user_name, message=text, to=to or [])
        self.bus.publish(message)
        return message

    async def stop(self) -> None:
        """Stops components in reverse order, then the bus and the store; bounded by ``STOP_TIMEOUT_S`` each."""
        for component in reversed(self.components):
            began = time.perf_counter()
            try:
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await component.stop()
            except Exception:
                log.exception("stopping %s failed", component.name)
            log.debug("stopped %s in %.3f s", component.name, time.perf_counter() - began)
        self.components = []
        await self.tasks.aclose()
        await self.lag_probe.stop()
        await self.bus.drain(timeout=STOP_TIMEOUT_S)  # let storage write what is queued
        for sub in self._subscriptions:
            sub.close()
        await self.bus.aclose()
        await self.store.close()
        self._started = False
