"""Ports: what the core needs from the outside world, as protocols. Adapters live in app/ (or in tests).

The LLM port (ChatModel) is in :mod:`companions.llm.types`; device ports (Camera, Speaker) next to the
responders that use them. This module holds the query ports every companion uses.
"""

from __future__ import annotations

from typing import Protocol

from companions.wire.protocol import Query, QueryResult


class QuerySender(Protocol):
    """Sends a Query and awaits its QueryResult (the query broker implements this)."""

    async def send_query(self, query: Query, timeout: float | None = None, *,
                         clients_only: bool = False) -> QueryResult:
        """Returns the result, or an error QueryResult on timeout / unsupported type; never hangs forever.
        ``clients_only``: only the clients registered for it answer, never this app's own device."""
        ...


class QueryResponder(Protocol):
    """Answers queries of one type in-process (vision, speak ...). Bridge clients may answer them too."""

    query_type: str

    async def respond(self, query: Query) -> QueryResult:
        """Returns the result for ``query``; a failure is an error QueryResult, not an exception."""
        ...
