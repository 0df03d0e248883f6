"""Keeps the stored conversations searchable, so companions (and the search panel) find what was said before.

Each message is a chunk of its own, with its message id, speaker and time, written "Name: words" (the speaker's
name where known): long-term recall (app/memory/recall.py) finds lines and dates them. On start, every stored
conversation is indexed in the background (unchanged ones cost one hash each). Afterwards a
conversation is re-indexed when it ends (the conversation read model says ``ended``), when the user leaves it for
another one, and as soon as the user edits or deletes one of its messages (``MessageRevised``: a search right after
finds the new words, not the old ones); it is forgotten when it is deleted. One conversation is indexed by one pass
at a time; a request during a pass runs one more pass after it (the running one may have read the old words).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.conversations.active import MessageRevised
from app.storage.database import ConversationStore
from companions.common.tasks import TaskSet
from companions.conversation.readmodel import ConversationChanged
from companions.search.engine import SearchEngine
from companions.search.index import IndexedLine
from companions.wire.bus import Bus, Subscription

if TYPE_CHECKING:
    from app.memory.notes import NoteWriter

log = logging.getLogger(__name__)


def conversation_source(conversation_id: int) -> str:
    """The search index's source name of a stored conversation (what hits show as their source)."""
    return f"conversation:{conversation_id}"


class ConversationIndexer:
    name = "conversation-indexing"

    def __init__(self, store: ConversationStore, engine: SearchEngine, bus: Bus,
                 current: Callable[[], int | None], names: Callable[[str], str | None] = lambda _id: None, *,
                 notes: NoteWriter | None = None) -> None:
        self.store = store
        self.names = names  # a speaker's name for its id (a companion's; None: the id is written)
        self.engine = engine
        self.bus = bus
        self.current = current
        self.tasks = TaskSet("conversation-indexing")
        self._subscription: Subscription | None = None
        self._was_running = False
        self.notes = notes  # notes about the user (app/memory/notes.py), started and stopped here
        self._busy: set[int] = set()  # conversations with a pass under way
        self._again: set[int] = set()  # ... and those asked for again meanwhile

    async def start(self) -> None:
        self._subscription = self.bus.subscribe("events", self._on_event, name="conversation-indexing", maxsize=256)
        if self.notes is not None:
            await self.notes.start()
        self.tasks.spawn(self._index_all(), name="index-stored-conversations")

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        await self.tasks.aclose()
        if self.notes is not None:
            await self.notes.stop()

    def _on_event(self, item: object) -> None:
        if isinstance(item, MessageRevised):  # an edit applies to the active conversation (app/conversations/active.py)
            conversation = self.current()
            if conversation is not None:
                self.request(conversation)
            return
        if not isinstance(item, ConversationChanged):
            return
        running = item.view.status == "running"
        if self._was_running and item.view.status == "ended":
            conversation = self.current()
            if conversation is not None:
                self.request(conversation)
        self._was_running = running

    @property
    def running(self) -> bool:
        return self._subscription is not None

    def request(self, conversation_id: int) -> None:
        """Re-indexes ``conversation_id`` in the background (e.g. when the user switches away from it); nothing
        while the indexer is not running (search could not start: the runtime left it out)."""
        if not self.running:
            return
        if conversation_id in self._busy:
            self._again.add(conversation_id)
            return
        self._busy.add(conversation_id)
        self.tasks.spawn(self._passes(conversation_id), name=f"index-conversation-{conversation_id}")

    async def _passes(self, conversation_id: int) -> None:
        """Index passes over one conversation (call with it marked busy) until no request came during the last."""
        try:
            while True:
                self._again.discard(conversation_id)
                await self.index(conversation_id)
                if conversation_id not in self._again:
                    return
        finally:
            self._busy.discard(conversation_id)

    async def index(self, conversation_id: int) -> None:
        try:
            stored = await self.store.messages(conversation_id)
            lines = [IndexedLine(s.message.params.id, s.message.params.from_, s.created_at,
                                 f"{self.names(s.message.params.from_) or s.message.params.from_}: "
                                 f"{s.message.params.message}") for s in stored]
            await self.engine.index_conversation(str(conversation_id), lines)
        except Exception:  # the search index is a convenience: never let it take a conversation down
            log.exception("indexing conversation %s failed", conversation_id)

    async def forget(self, conversation_id: int) -> None:
        """Removes a deleted conversation from the index (nothing while the indexer is not running)."""
        if not self.running:
            return
        try:
            await self.engine.remove(conversation_source(conversation_id))
            if self.notes is not None:
                await self.notes.forget_all("conversation_id", conversation_id)
        except Exception:
            log.exception("removing conversation %s from the search index failed", conversation_id)

    async def _index_all(self) -> None:
        for info in await self.store.list_conversations():
            if not info.message_count:
                continue
            if info.id in self._busy:
                self._again.add(info.id)
            else:
                self._busy.add(info.id)
                await self._passes(info.id)
