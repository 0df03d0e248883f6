"""The user's conversations: which one is active, what is said in it stored, and the user's edits to them.

A runtime part (:class:`Conversations`, first in start order after the store opens): it opens the latest stored
conversation (or a new one), stores every message and state published on the bus into the active conversation,
and carries out what the user asks of conversations: send, start a new one, switch, delete, edit or delete a
message. Views follow the bus (``ActiveConversationChanged``, ``MessageRevised``); nothing here knows Qt.

Every companion's memory follows the active conversation: it is told before the views hear of the change
(:meth:`Memory.follow`), so by then each companion's prompt carries what it heard in the conversation now shown.
A deleted conversation is forgotten by every memory and by search.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from app.storage.database import ConversationInfo, ConversationStore, StoredMessage
from companions.wire.bus import Bus, BusItem, LocalEvent, Subscription
from companions.wire.protocol import Message, MessageMetadata, MessageParams, State, new_id

log = logging.getLogger(__name__)

STORED_WAIT_S: Final = 2.0  # at most this long for the storing subscriber to catch up before messages are read


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


class TurnTaking(Protocol):
    """What the conversation manager does for the user's conversations (stop a turn before the words change)."""

    async def stop_conversation(self) -> object: ...

    def revise_message(self, message_id: str, text: str | None) -> None: ...

    def switched(self) -> None: ...


class Memory(Protocol):
    """A companion's memory (companions/memory/context.py), which follows the active conversation and the user's
    edits."""

    async def follow(self, conversation: int) -> None: ...

    async def forget_conversation(self, conversation: int) -> None: ...

    async def revise(self, message_id: str, text: str | None) -> bool: ...


class Indexing(Protocol):
    """The search side of conversations (the conversation indexer): index one left, forget one deleted."""

    def request(self, conversation_id: int) -> None: ...

    async def forget(self, conversation_id: int) -> None: ...


class Conversations:
    """The active conversation and the user's commands on stored conversations."""

    name = "conversations"

    def __init__(self, store: ConversationStore, bus: Bus, *, user_id: Callable[[], str], talk: TurnTaking,
                 memories: Callable[[], Iterable[Memory]], indexing: Indexing | None = None) -> None:
        self.store = store
        self.bus = bus
        self._user_id = user_id
        self._talk = talk
        self._memories = memories
        self.indexing = indexing
        self.active_id: int | None = None
        self._subscription: Subscription | None = None

    async def start(self) -> None:
        self.active_id = await self.store.latest_conversation() or await self.store.create_conversation()
        await self._follow(self.active_id)  # before the companions start hearing
        self._subscription = self.bus.subscribe(("messages", "states"), self._record, name="storage",
                                                maxsize=10_000, overflow="drop_newest")

    async def stop(self, timeout_s: float = 1.0) -> None:
        """Stores what is still queued (every other part stopped before this one), then stops storing."""
        await self.bus.drain(timeout=timeout_s)
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    async def _record(self, item: BusItem) -> None:
        conversation = self.active_id
        if conversation is None:
            return
        if isinstance(item, Message):
            # The user's first words name the conversation, not a companion's greeting that opened it (measured: every
            # new conversation was titled "こんにちは！…", Akari's first greeting).
            await self.store.add_message(conversation, item, titles=item.params.from_ == self._user_id())
        elif isinstance(item, State):
            await self.store.add_state(conversation, item)

    async def messages(self, conversation_id: int, limit: int | None = None) -> list[StoredMessage]:
        """The conversation's stored messages, oldest first, with every message published before the call among
        them (measured: a chat shown again right after "second" was shown read the database before "second" was
        written, and the message vanished from the window)."""
        await self._caught_up()
        return await self.store.messages(conversation_id, limit=limit)

    async def listed(self) -> list[ConversationInfo]:
        """The stored conversations, newest first, counting every message published before the call."""
        await self._caught_up()
        return await self.store.list_conversations()

    async def _caught_up(self) -> None:
        """Until the storing subscriber has written what was published so far (at most :data:`STORED_WAIT_S`)."""
        if self._subscription is not None:
            await self._subscription.settled(timeout=STORED_WAIT_S)

    def send(self, text: str, to: list[str] | None = None, *, metadata: Mapping[str, str] | None = None) -> Message:
        """Publishes a message from the user; it is stored and delivered to the companions by the bus. ``metadata``
        marks parts of it (companions/devices/shown_look.py: what the camera saw)."""
        message = Message(params=MessageParams(
            id=new_id(), from_=self._user_id(), to=list(to or []), message=text,
            metadata=MessageMetadata.model_validate(dict(metadata)) if metadata else None))
        self.bus.publish(message)
        return message

    async def revise(self, message_id: str, text: str | None) -> None:
        """Edits (``text``) or deletes (None) a message of the active conversation: the stored conversation, every
        companion's memory and the conversation's history follow, then the views (``MessageRevised``). The user's
        edit comes through ``ConversationControl.edit``, which stops a turn built on the old words first."""
        if self.active_id is None:
            raise RuntimeError("no conversation is open")
        self._talk.revise_message(message_id, text)
        await self.store.revise_message(self.active_id, message_id, text)
        for memory in self._memories():
            await memory.revise(message_id, text)
        self.bus.publish(MessageRevised(message_id, text))

    async def new(self) -> int:
        await self._leave()
        await self._activate(await self.store.create_conversation())
        assert self.active_id is not None
        return self.active_id

    async def switch(self, conversation_id: int) -> None:
        """Makes the stored conversation ``conversation_id`` the active one; LookupError when there is none."""
        if conversation_id == self.active_id:
            return
        if not await self.store.has_conversation(conversation_id):
            raise LookupError(f"there is no conversation {conversation_id} (deleted?)")
        await self._leave()
        await self._activate(conversation_id)

    async def delete(self, conversation_id: int) -> int:
        """Deletes a stored conversation (messages and votes), removes it from every companion's memory and from
        the search index.

        When it is the active one, the most recently updated other conversation becomes active, or a new empty
        one when none is left. Returns the active conversation's id.
        """
        if conversation_id == self.active_id:
            await self._leave(index=False)
            remaining = [c.id for c in await self.store.list_conversations() if c.id != conversation_id]
            await self._activate(remaining[0] if remaining else await self.store.create_conversation())
        await self.store.delete_conversation(conversation_id)
        for memory in self._memories():
            await memory.forget_conversation(conversation_id)
        if self.indexing is not None:
            await self.indexing.forget(conversation_id)
        assert self.active_id is not None
        return self.active_id

    async def _leave(self, *, index: bool = True) -> None:
        """Ends the running conversation and lets everything said in it be stored before the switch."""
        await self._talk.stop_conversation()  # a reply in the making would land in the next one
        await self.bus.drain()
        if index and self.active_id is not None and self.indexing is not None:
            self.indexing.request(self.active_id)  # the conversation left becomes searchable with all said in it

    async def _activate(self, conversation_id: int) -> None:
        previous, self.active_id = self.active_id, conversation_id
        await self._follow(conversation_id)
        if previous is not None:
            self._talk.switched()  # the turn history starts afresh; the next speaker is warmed with this context
        self.bus.publish(ActiveConversationChanged(conversation_id, previous))

    async def _follow(self, conversation_id: int) -> None:
        """Every companion's memory now holds what it heard in ``conversation_id`` (within its budget). All together:
        a line from elsewhere (the bridge, the network) heard during the switch is not split between two."""
        await asyncio.gather(*(memory.follow(conversation_id) for memory in self._memories()))
