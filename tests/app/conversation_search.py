"""Searching a stored conversation as the search panel and the companions do, waiting for the conversation indexer:
it works in the background (app/conversations/indexing.py), so a test asks until the index says what it expects."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from app.conversations.indexing import conversation_source
from companions.search.engine import SearchEngine


async def lines_found(engine: SearchEngine, conversation_id: int, query: str,
                      until: Callable[[list[str]], bool] = bool, *, timeout: float = 30.0) -> list[str]:
    """The lines of conversation ``conversation_id`` that searching for ``query`` finds, once ``until`` holds for
    them (by default: some are found); raises TimeoutError naming the lines last found."""
    source = conversation_source(conversation_id)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        lines = [hit.text for hit in (await engine.search(query, limit=10)).hits if hit.source == source]
        if until(lines):
            return lines
        if loop.time() >= deadline:
            raise TimeoutError(f"searching {query!r} in {source} for {timeout:g} s: the last lines found {lines}")
        await asyncio.sleep(0.05)
