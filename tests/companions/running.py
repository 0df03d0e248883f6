"""Companions under the real conversation manager for one test: started in order, stopped and closed in order."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from companions.companion.companion import Companion
from companions.conversation import ConversationManager
from companions.wire.bus import InProcessBus
from companions.wire.query_broker import QueryBroker


@contextlib.asynccontextmanager
async def running(manager: ConversationManager, companions: Sequence[Companion], broker: QueryBroker,
                  bus: InProcessBus) -> AsyncIterator[None]:
    """Starts ``companions`` then ``manager``; on the way out stops the manager, closes the companions, the broker
    and the bus (whatever the test raised)."""
    for companion in companions:
        await companion.start()
    await manager.start()
    try:
        yield
    finally:
        await manager.stop()
        for companion in companions:
            await companion.aclose()
        await broker.aclose()
        await bus.aclose()
