"""The bridge on a bus of its own (:func:`serving_bridge`), and with the app's devices behind it (a camera and a voice
answering queries) for the reference clients."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from app.bridge import BridgeServer
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, Query, QueryResult, WireItem
from companions.wire.query_broker import QueryBroker
from tests.waiting import wait_until

COMPANIONS = {"akari", "hina"}


@contextlib.asynccontextmanager
async def serving_bridge() -> AsyncIterator[tuple[InProcessBus, BridgeServer]]:
    """A bridge on a free loopback port, over a bus and a query broker of its own; stopped, then they close."""
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    server = BridgeServer(bus, broker, port=0)
    await server.start()
    try:
        yield bus, server
    finally:
        await server.stop()
        await broker.aclose()
        await bus.aclose()


class AppDevice:
    """The app's own camera or voice (a QueryResponder double): answers at once and records what it did."""

    def __init__(self, query_type: str) -> None:
        self.query_type = query_type
        self.answered: list[Query] = []

    async def respond(self, query: Query) -> QueryResult:
        self.answered.append(query)
        return QueryResult.ok(query.id, {"by": "app"})


class App:
    def __init__(self, bus: InProcessBus, broker: QueryBroker, bridge: BridgeServer) -> None:
        self.bus, self.broker, self.bridge = bus, broker, bridge
        self.camera, self.voice = AppDevice("vision"), AppDevice("speak")
        broker.register(self.camera)
        broker.register(self.voice)
        self.wire: list[WireItem] = []
        bus.subscribe(("messages", "actions", "states", "queries"), self.wire.append, name="recorder")

    def url(self, query: str = "") -> str:
        return f"ws://127.0.0.1:{self.bridge.port}/{query}"

    async def heard(self, message_id: str) -> Message:
        def found() -> Message | None:
            return next((i for i in self.wire if isinstance(i, Message) and i.params.id == message_id), None)

        await wait_until(lambda: found() is not None, f"message {message_id} on the bus")
        message = found()
        assert message is not None
        return message

    async def ask(self, companion: str, query_type: str, **body: Any) -> QueryResult:
        query = Query.create(from_=companion, type=query_type, body=body or None)
        return await asyncio.wait_for(self.broker.send_query(query, timeout=10), 10)


async def start_app(**bridge_options: Any) -> App:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    bridge = BridgeServer(bus, broker, port=0, reserved_ids=lambda: COMPANIONS, **bridge_options)
    await bridge.start()
    return App(bus, broker, bridge)
