"""QueryResponder doubles: the app's camera and voice as the companions reach them through the query broker, and
a responder that echoes."""

from __future__ import annotations

import asyncio

from companions.wire.protocol import Query, QueryResult


class EchoResponder:
    """A QueryResponder double: answers with the query body, optionally after an event, or fails."""

    def __init__(self, query_type: str, *, gate: asyncio.Event | None = None, fail: bool = False) -> None:
        self.query_type = query_type
        self.gate = gate
        self.fail = fail
        self.seen: list[Query] = []
        self.cancelled = asyncio.Event()
        self.started = asyncio.Event()

    async def respond(self, query: Query) -> QueryResult:
        self.seen.append(query)
        self.started.set()
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        if self.fail:
            raise RuntimeError("camera unplugged")
        return QueryResult.ok(query.id, {"echo": query.params.body or {}})


class Camera:
    """The app's camera: answers a look with ``body`` at once and keeps what it was asked."""

    query_type = "vision"

    def __init__(self, body: dict[str, object] | None = None) -> None:
        self.body = body if body is not None else {"image": "AAAA", "description": "a person at a desk"}
        self.looks: list[Query] = []

    async def respond(self, query: Query) -> QueryResult:
        self.looks.append(query)
        return QueryResult.ok(query.id, self.body)


class Voice:
    """The app's voice: answers a speak query at once, as though saying it took ``duration`` seconds, and keeps what
    it was asked to say."""

    query_type = "speak"

    def __init__(self, duration: float = 0.01) -> None:
        self.duration = duration
        self.said: list[Query] = []
        self.done = asyncio.Event()  # set once it said something

    async def respond(self, query: Query) -> QueryResult:
        self.said.append(query)
        self.done.set()
        return QueryResult.ok(query.id, {"duration": self.duration})

    def messages(self) -> list[str]:
        """The text of every line said, in order."""
        return [str((q.params.body or {}).get("message")) for q in self.said]
