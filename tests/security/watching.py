"""The events of a started runtime, gathered until its conversation ends (the security tests' view of a turn)."""

from __future__ import annotations

import asyncio

from companions.conversation.readmodel import ConversationChanged
from companions.wire.bus import Bus


class ConversationWatch:
    """Every item on the bus's ``events`` topic in :attr:`events`; :attr:`ended` is set once the conversation ends."""

    def __init__(self, bus: Bus, name: str) -> None:
        self.events: list[object] = []
        self.ended = asyncio.Event()
        bus.subscribe("events", self._on_event, name=name, direct=True)

    def _on_event(self, item: object) -> None:
        self.events.append(item)
        if isinstance(item, ConversationChanged) and item.view.status == "ended":
            self.ended.set()
