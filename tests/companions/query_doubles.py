"""A QueryResponder double."""

from __future__ import annotations

import asyncio

from companions.protocol import Query, QueryResult


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
