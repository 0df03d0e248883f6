"""The research agent on the web: off by default; with ``[research] web_search_url`` it asks a SearXNG instance
(here a fake one on a loopback port, answering SearXNG's JSON API) beside the local index, and its citations name
the pages' URLs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.search.service import build_search_service
from app.settings.model import load_settings
from companions.search.research import ResearchAgent, ResearchResult
from companions.search.web import WebAugmentedSearch
from tests.app.searxng import PAGE, SNIPPET, FakeSearxng
from tests.companions.search_doubles import HashingEmbedder


@pytest.fixture
def searxng() -> Iterator[FakeSearxng]:
    fake = FakeSearxng()
    yield fake
    fake.close()


@pytest.fixture
def searxng_without_json() -> Iterator[FakeSearxng]:
    fake = FakeSearxng(json_enabled=False)
    yield fake
    fake.close()


async def _research(web_url: str | None, question: str) -> tuple[ResearchResult, ResearchAgent]:
    loaded = load_settings()
    if web_url is not None:
        loaded.settings.research.web_search_url = web_url
    service = build_search_service(loaded.settings, loaded.paths.ensure(), embedder=HashingEmbedder())
    await service.start()
    try:
        await service.reindex()
        agent = service.research_agent(None)
        return await agent.run(question), agent
    finally:
        await service.stop()


async def test_off_by_default_the_research_agent_never_asks_the_web(madoi_home: Path, searxng: FakeSearxng) -> None:
    assert load_settings().settings.research.web_search_url is None
    result, _ = await _research(None, "千利休は誰に仕えた？")
    assert result.citations
    assert all(not c.source.startswith("http") for c in result.citations)
    assert searxng.queries == []


async def test_with_a_searxng_url_citations_name_the_web_pages(madoi_home: Path, searxng: FakeSearxng) -> None:
    result, _ = await _research(searxng.url, "千利休は誰に仕えた？")
    assert searxng.queries, "the research asked the web"
    assert all(q["format"] == ["json"] for q in searxng.queries)
    assert searxng.queries[0]["q"] == ["千利休は誰に仕えた？"]
    web = [c for c in result.citations if c.source.startswith("http")]
    assert [(c.source, c.title, c.snippet) for c in web] == [(PAGE, "千利休 - 茶の湯の歴史", SNIPPET)]
    assert any(c.source.endswith("tea-ceremony.ja.md") for c in result.citations), "the local index still counts"
    assert f"[{web[0].number}]" in result.answer, "the answer cites the web page"


async def test_a_searxng_that_refuses_json_leaves_the_local_answer(madoi_home: Path,
                                                                   searxng_without_json: FakeSearxng) -> None:
    result, agent = await _research(searxng_without_json.url, "千利休は誰に仕えた？")
    assert searxng_without_json.queries
    assert result.citations
    assert all(not c.source.startswith("http") for c in result.citations)
    assert isinstance(agent.search, WebAugmentedSearch)
    assert "refuses JSON (403): add 'json' to search.formats" in agent.search.problems[0]
