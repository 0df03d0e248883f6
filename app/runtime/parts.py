"""What the assembly built for one runtime: its parts, typed, fixed once built.

The required parts are always there; search, the conversation indexer, the network and the bridge are optional
(off in the settings, or not available on this machine). A part that fails to start is replaced by its absence
(:meth:`Parts.without`), and the reason goes to the problems the window shows.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from app.bridge import BridgeServer
    from app.conversations.active import Conversations
    from app.conversations.indexing import ConversationIndexer
    from app.conversations.speaking_first import SpeakingFirst
    from app.devices.wiring import Devices
    from app.llm.connection import ModelConnection
    from app.llm.health_check import ModelHealthCheck
    from app.memory.store import SqliteMemoryStore
    from app.search.service import SearchService
    from companions.companion.cast import CompanionCast
    from companions.conversation import ConversationManager
    from companions.conversation.commands import ConversationControl
    from companions.network.link import NetworkLink
    from companions.wire.query_broker import QueryBroker


class Component(Protocol):
    """Something the runtime starts after the bus and storage, and stops before them."""

    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(frozen=True)
class Parts:
    """The parts of one runtime. :meth:`components` gives them in start order; the runtime stops them in reverse,
    so the bridge stops before the conversation, the conversation before the companions, the companions before
    the devices, and storing the conversation last of all. ``control`` takes the user's commands (mute, force,
    stop, interrupt, set present, edit)."""

    conversations: Conversations
    broker: QueryBroker
    devices: Devices
    models: ModelConnection
    cast: CompanionCast
    memory: SqliteMemoryStore  # the companions' memories: the cast's store (it closes it), the Memory view's
    conversation_manager: ConversationManager
    control: ConversationControl
    health_check: ModelHealthCheck  # while a model does not answer: asks whether it is back
    speaking_first: SpeakingFirst  # when the companions may speak first (on what noticing saw, after a silence)
    search: SearchService | None = None
    indexer: ConversationIndexer | None = None
    network: NetworkLink | None = None
    bridge: BridgeServer | None = None

    def components(self) -> list[Component]:
        """Every part that starts and stops, in start order."""
        started: list[Component | None] = [
            self.conversations, self.broker, *self.devices.components, self.search, self.cast,
            self.conversation_manager, self.speaking_first, self.health_check, self.control, self.network,
            self.indexer, self.bridge,
        ]
        return [c for c in started if c is not None]

    def without(self, component: Component) -> Parts:
        """These parts with ``component`` (search, the indexer or the bridge, when it failed to start) left out, and
        with it what needs it (the indexer needs search); views then say it is not available. Any other part that
        fails to start is kept: it says itself what does not work, as a camera that cannot open or a network that
        cannot listen does (the network panel shows its reason)."""
        if component is self.search:
            return dataclasses.replace(self, search=None, indexer=None)
        if component is self.indexer:
            return dataclasses.replace(self, indexer=None)
        if component is self.bridge:
            return dataclasses.replace(self, bridge=None)
        return self
