"""The web search adapter: a SearXNG instance's JSON API (``GET <url>/search?q=...&format=json``).

SearXNG answers JSON only when its ``settings.yml`` lists ``json`` under ``search.formats``; a 403 says so to the
user. Used by the research agent when ``[research] web_search_url`` is set (off by default).
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from companions.search.web import WebResult, WebSearchError

log = logging.getLogger(__name__)


class SearxngSearch:
    """``companions.search.web.WebSearch`` over one SearXNG instance (``base_url``: its root, e.g.
    ``http://127.0.0.1:8888``)."""

    def __init__(self, base_url: str, *, timeout_s: float = 10.0, language: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.language = language

    async def search_web(self, query: str, *, limit: int = 5) -> list[WebResult]:
        params = {"q": query, "format": "json"}
        if self.language:
            params["language"] = self.language
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.get(f"{self.base_url}/search", params=params,
                                            headers={"Accept": "application/json"})
        except httpx.HTTPError as err:
            raise WebSearchError(f"SearXNG at {self.base_url} did not answer: {type(err).__name__}: {err}") from err
        if response.status_code == 403:
            raise WebSearchError(f"SearXNG at {self.base_url} refuses JSON (403): add 'json' to search.formats in "
                                 f"its settings.yml")
        if response.status_code != 200:
            raise WebSearchError(f"SearXNG at {self.base_url} answered HTTP {response.status_code}")
        try:
            body: Any = response.json()
        except ValueError as err:
            raise WebSearchError(f"SearXNG at {self.base_url} did not answer JSON: {err}") from err
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise WebSearchError(f"SearXNG at {self.base_url} answered without a results list")
        found: list[WebResult] = []
        for item in results:
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                continue
            if not item["url"].startswith(("http://", "https://")):
                continue
            found.append(WebResult(title=str(item.get("title") or ""), url=item["url"],
                                   snippet=str(item.get("content") or "")))
            if len(found) >= limit:
                break
        return found
