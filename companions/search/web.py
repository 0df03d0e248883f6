"""The research agent on the web (optional): a web search port and the search that adds its results to the
local index's.

:class:`WebSearch` is the port (``app/search/web.py`` adapts a SearXNG instance's JSON API; a test uses a local fake
server). :class:`WebAugmentedSearch` is what the research agent searches when the web is on: each query goes to the
local index and to the web at once, and the web's results join the local hits as hits whose ``source`` is their URL
(``kind`` "web"), so the answer's citations name the pages they come from. A web search that fails leaves the local
hits alone and is noted in ``problems``; the research goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
from dataclasses import dataclass
from typing import Protocol

from companions.search.classify.query_classifier import QueryClassification
from companions.search.engine import SearchHit, SearchResponse
from companions.search.research import SearchPort

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WebResult:
    """One web page found: its title, URL and the provider's snippet of it."""

    title: str
    url: str
    snippet: str


class WebSearchError(Exception):
    """The web search provider could not answer (worded for the user)."""


class WebSearch(Protocol):
    """The web search port."""

    async def search_web(self, query: str, *, limit: int = 5) -> list[WebResult]:
        """Pages for ``query``, best first. Raises :class:`WebSearchError` when the provider fails."""
        ...


def web_hit(result: WebResult, rank: int) -> SearchHit:
    """A web result as a search hit: its URL is the source (and the citation), its snippet the text."""
    # Negative chunk ids never meet the index's own (SQLite rowids are positive); one per URL.
    chunk_id = -(abs(hash(result.url)) % 2**62) - 1
    return SearchHit(chunk_id=chunk_id, source=result.url, title=result.title or result.url, kind="web",
                     snippet=result.snippet, text=result.snippet, score=1.0 / (rank + 1),
                     channel_scores={"web": 1.0 / (rank + 1)})


class WebAugmentedSearch:
    """The research agent's search port over the local index (``local``) and the web (``web``)."""

    def __init__(self, local: SearchPort, web: WebSearch, *, web_limit: int = 5) -> None:
        self.local = local
        self.web = web
        self.web_limit = web_limit
        self.problems: list[str] = []

    async def classify(self, text: str) -> QueryClassification:
        return await self.local.classify(text)

    async def _web(self, text: str) -> list[WebResult]:
        try:
            return await self.web.search_web(text, limit=self.web_limit)
        except WebSearchError as err:
            log.warning("web search for %r failed: %s", text, err)
            self.problems.append(f"web search for {text!r} failed: {err}")
            return []

    async def search(self, text: str, *, limit: int = 10, classification: QueryClassification | None = None,
                     ) -> SearchResponse:
        """The local hits and the web's, alternating (each list keeps its own order), ``limit`` local ones."""
        local_task = asyncio.ensure_future(self.local.search(text, limit=limit, classification=classification))
        try:
            web = await self._web(text)
            local = await local_task
        finally:
            if not local_task.done():
                local_task.cancel()
        web_hits = [web_hit(r, rank) for rank, r in enumerate(web)]
        merged = [h for pair in itertools.zip_longest(local.hits, web_hits) for h in pair if h is not None]
        return dataclasses.replace(local, hits=merged)
