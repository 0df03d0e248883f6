"""The search panel's research on the web: with ``[research] web_search_url`` set, a real started runtime's research
asks the SearXNG instance (a fake one on a loopback port) and the answer's citations name the web page by its site
and URL beside the local documents."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimePeople, RuntimeSearch
from tests.app.searxng import PAGE, FakeSearxng
from tests.ui.conftest import started_runtime
from tests.ui.scripted_runtime import until
from ui.search.panel import SearchPanel


@pytest.fixture
def searxng(madoi_home: Path) -> Iterator[FakeSearxng]:
    fake = FakeSearxng()
    madoi_home.mkdir(parents=True, exist_ok=True)
    (madoi_home / "settings.toml").write_text(f'[research]\nweb_search_url = "{fake.url}"\n', encoding="utf-8")
    yield fake
    fake.close()


async def test_research_cites_a_web_page_by_its_site_and_url(qtbot: QtBot, searxng: FakeSearxng) -> None:
    async with started_runtime() as runtime:
        panel = SearchPanel(runtime.bus, RuntimeSearch(runtime), RuntimePeople(runtime))
        qtbot.addWidget(panel)
        panel.resize(520, 860)
        panel.show()
        panel.attach()
        await until(panel.index_changed, lambda: panel.index_label.text() == "4 documents indexed (4 new or changed)",
                    timeout=30)
        panel.query.setText("千利休は誰に仕えた？")
        qtbot.mouseClick(panel.research_button, Qt.MouseButton.LeftButton)
        await asyncio.wait_for(panel.wait_idle(), 30)

        assert searxng.queries, "the research asked the web"
        result = panel.research_result
        assert result is not None
        web = next(c for c in result.citations if c.source == PAGE)
        shown = panel.research_view.toPlainText()
        assert f"[{web.number}] example.org" in shown
        assert PAGE in shown
        assert "tea-ceremony.ja.md" in shown, "the local documents are still cited"
        panel.detach()
