"""The search panel on a real started runtime: the real search service (offline embedder, rule classifier) over
the bundled sample knowledge, the research agent without a language model (its extractive path), background
indexing with its progress, and the states where search cannot start or the engine fails."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimePeople, RuntimeSearch
from app.runtime.runtime import Runtime
from companions.search.semantic import Vectors
from tests.companions.search_doubles import HashingEmbedder
from tests.ui.conftest import started_runtime, switch_language
from tests.ui.scripted_runtime import until
from ui.search.panel import SearchPanel


def _panel(qtbot: QtBot, runtime: Runtime, language: str) -> SearchPanel:
    switch_language(language)
    panel = SearchPanel(runtime.bus, RuntimeSearch(runtime), RuntimePeople(runtime))
    qtbot.addWidget(panel)
    panel.resize(520, 860)
    panel.show()
    panel.attach()
    return panel


async def _indexed(panel: SearchPanel, text: str) -> None:
    """Waits until the index row says ``text`` (the indexing pass finished)."""
    await until(panel.index_changed, lambda: panel.index_label.isVisible() and panel.index_label.text() == text,
                timeout=30)


async def _search(qtbot: QtBot, panel: SearchPanel, query: str) -> None:
    """Types ``query`` (or puts it, for Japanese: an input method would) and presses Enter; waits for the outcome."""
    panel.query.clear()
    if query.isascii():
        qtbot.keyClicks(panel.query, query)
    else:
        panel.query.setText(query)
    qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    await _idle(panel)


async def _idle(panel: SearchPanel) -> None:
    await asyncio.wait_for(panel.wait_idle(), 30)


def _fields(panel: SearchPanel) -> dict[str, str]:
    return {name: label.text() for name, label in panel.fields.items() if label.isVisible()}


def _hits(panel: SearchPanel, channel: str) -> str:
    return panel.views[channel].toPlainText()


def _tabs(panel: SearchPanel) -> list[str]:
    return [panel.results.tabText(i) for i in range(panel.results.count())]


async def test_an_english_query_shows_its_classification_each_channel_and_the_fused_ranking_with_sources(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        assert panel.classification_hint.isVisible()
        await _indexed(panel, "4 documents indexed (4 new or changed)")
        assert not panel.index_bar.isVisible()

        await _search(qtbot, panel, "Who wrote the first computer program?")

        assert panel.query.text() == "Who wrote the first computer program?"
        assert re.fullmatch(r"5 hits for “Who wrote the first computer program\?” in \d+ ms", panel.status.text())
        assert _fields(panel) == {
            "type": "local — a specific fact",
            "confidence": "70%",
            "entities": "—",
            "keywords": "wrote, first, computer, program",
            "weights": "keyword 0.35 · semantic 0.35 · graph 0.30",
            "intent": "A question about a specific piece of information (classified by rules)",
        }
        fused = _hits(panel, "fused")
        assert fused.startswith("1. computing-pioneers.en.md · score ")
        assert "resources/knowledge/computing-pioneers.en.md" in fused  # the full source under the name
        assert "Ada Lovelace translated an article about the Analytical Engine" in fused  # the snippet
        # Each channel's own score beside a hit (BM25's figure moves with the words indexed: not asserted).
        assert re.search(r"keyword \d+\.\d+ · semantic \d", fused)
        assert _tabs(panel)[0] == "Fused (5)"
        assert _tabs(panel)[1] == "Keyword (2)"
        assert re.match(r"1\. computing-pioneers\.en\.md · \d+\.\d+", _hits(panel, "keyword"))
        assert "2. madoi.en.md" in _hits(panel, "keyword")
        assert "computing-pioneers.en.md" in _hits(panel, "semantic")
        assert _tabs(panel)[3] == "Graph (0)"
        assert _hits(panel, "graph") == "This channel found nothing."
        panel.detach()


async def test_a_japanese_query_in_the_japanese_panel(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "ja")
        await _indexed(panel, "4 件の文書を索引済み（新規・変更 4 件）")

        await _search(qtbot, panel, "千利休は誰に仕えた？")

        assert re.fullmatch(r"「千利休は誰に仕えた？」: \d+ 件（\d+ ms）", panel.status.text())
        fields = _fields(panel)
        assert fields["type"] == "ローカル — 特定の情報"
        assert fields["entities"] == "千利休"
        assert fields["intent"] == "特定の情報についての質問（ルールで分類）"
        fused = _hits(panel, "fused")
        assert fused.startswith("1. tea-ceremony.ja.md · スコア 1.000")
        assert "織田信長と豊臣秀吉に茶頭として仕えた" in fused
        assert re.search(r"キーワード \d+\.\d+ · 意味 \d", fused)
        assert _tabs(panel)[:2] == ["統合 (5)", "キーワード (1)"]
        assert _hits(panel, "graph").startswith("1. tea-ceremony.ja.md")
        panel.detach()


async def test_a_relationship_query_shows_its_type_entities_and_graph_heavy_weights(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "ja")
        await _indexed(panel, "4 件の文書を索引済み（新規・変更 4 件）")
        await _search(qtbot, panel, "金閣寺と銀閣寺の関係は？")
        fields = _fields(panel)
        assert fields["type"] == "関係 — 物事の関係"
        assert fields["confidence"] == "85%"
        assert fields["entities"] == "金閣寺、銀閣寺"
        assert fields["weights"] == "キーワード 0.20 · 意味 0.20 · グラフ 0.60"
        assert _hits(panel, "fused").startswith("1. kyoto-temples.ja.md")
        assert _hits(panel, "graph").startswith("1. kyoto-temples.ja.md")

        switch_language("en")  # the same results, in the other language
        assert _fields(panel)["type"] == "relationship — how things relate"
        assert _fields(panel)["entities"] == "金閣寺, 銀閣寺"
        assert _hits(panel, "fused").startswith("1. kyoto-temples.ja.md · score 1.000")
        panel.detach()


async def test_research_shows_its_progress_then_an_extractive_answer_with_numbered_cited_sources(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        assert runtime.parts.models.resolution is not None
        assert runtime.parts.models.resolution.model is None
        panel = _panel(qtbot, runtime, "en")
        await _indexed(panel, "4 documents indexed (4 new or changed)")
        steps: list[str] = []
        panel.research_changed.connect(lambda: steps.append(panel.research_status.text()))
        panel.query.setText("How are Ada Lovelace and Alan Turing related?")

        qtbot.mouseClick(panel.research_button, Qt.MouseButton.LeftButton)
        assert panel.research_busy.isVisible() or steps  # running, or already past its first step
        await _idle(panel)

        assert steps[:2] == ["Starting the research…", "Planning the searches…"]
        assert steps[2].startswith("Searching (round 1): “How are Ada Lovelace and Alan Turing related?”, “Ada”")
        result = panel.research_result
        assert result is not None
        assert len(result.citations) >= 2
        cited, searched = len(result.citations), len(result.queries)
        assert steps[-1] == (f"Done: {cited} citation{'s' if cited != 1 else ''} from {searched} "
                             f"search{'es' if searched != 1 else ''}.")
        assert not panel.research_busy.isVisible()
        answer = panel.research_view.toPlainText()
        first, _, rest = answer.partition("Extractive answer: no language model is configured")
        assert "Ada Lovelace and Alan Turing are linked through the Analytical Engine" in first
        assert "[1]" in first
        assert "Citations" in rest
        assert "[1] computing-pioneers.en.md" in rest
        assert "resources/knowledge/computing-pioneers.en.md" in rest
        assert f"[{len(result.citations)}] " in rest
        assert f"[{len(result.citations) + 1}] " not in rest
        # The research also searched the question itself: its classification and hits are shown.
        assert _fields(panel)["type"] == "relationship — how things relate"
        assert _fields(panel)["entities"] == "Ada, Lovelace, Alan, Turing"
        assert _hits(panel, "fused").startswith("1. computing-pioneers.en.md")
        panel.detach()


async def test_cancel_and_a_new_query_stop_the_running_research_and_detach_cancels_what_is_left(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        await _indexed(panel, "4 documents indexed (4 new or changed)")
        assert not panel.cancel_button.isEnabled()
        panel.query.setText("Who designed the Bombe?")
        qtbot.mouseClick(panel.research_button, Qt.MouseButton.LeftButton)
        assert panel.cancel_button.isEnabled()
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        assert panel.research_status.text() == "Research cancelled."
        assert panel.status.text() == "Cancelled."
        await panel.wait_idle()
        assert not panel.cancel_button.isEnabled()
        assert panel.research_result is None
        assert panel.query.text() == "Who designed the Bombe?"

        panel.research()  # a new query cancels the running research
        await _search(qtbot, panel, "Analytical Engine")
        assert panel.research_status.text() == "Research cancelled."
        assert re.fullmatch(r"\d+ hits for “Analytical Engine” in \d+ ms", panel.status.text())
        assert panel.research_result is None

        panel.research("千利休は誰に仕えた？")
        assert panel.busy
        panel.detach()
        await panel.wait_idle()
        assert not panel.busy


async def test_indexing_progress_counts_up_to_the_total_then_shows_the_documents(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    monkeypatch.setenv("MADOI_SEARCH_FOLDERS", str(folder))
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        await _indexed(panel, "4 documents indexed (4 new or changed)")
        for name, text in (("a.md", "Apples grow on trees."), ("b.md", "Bees make honey."),
                           ("c.txt", "Cats sleep a lot.")):
            (folder / name).write_text(text, encoding="utf-8")
        shown: list[tuple[bool, str, bool, str]] = []
        panel.index_changed.connect(lambda: shown.append(
            (panel.index_bar.isVisible(), panel.index_bar.text(), panel.index_label.isVisible(),
             panel.index_label.text())))

        qtbot.mouseClick(panel.reindex_button, Qt.MouseButton.LeftButton)
        assert not panel.reindex_button.isEnabled()  # one pass at a time
        await _indexed(panel, "7 documents indexed (3 new or changed)")

        bars = [bar for visible, bar, _, _ in shown if visible]
        counts = [b for b in bars if b.startswith("Indexing ") and "/" in b]
        assert counts == ["Indexing 0 / 3", "Indexing 1 / 3", "Indexing 2 / 3", "Indexing 3 / 3"]
        assert shown[-1] == (False, shown[-1][1], True, "7 documents indexed (3 new or changed)")
        assert panel.reindex_button.isEnabled()
        assert not panel.index_problems.isVisible()

        await _search(qtbot, panel, "Where does honey come from?")
        assert _hits(panel, "fused").startswith("1. b.md")
        panel.detach()


async def test_problems_of_the_indexing_pass_are_shown(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_SEARCH_FOLDERS", str(tmp_path / "gone"))
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        await _indexed(panel, "4 documents indexed (4 new or changed)")
        assert panel.index_problems.isVisible()
        assert panel.index_problems.text() == f"Indexing problems: search folder not found: {tmp_path / 'gone'}"
        panel.detach()


async def test_search_not_available_says_why_and_keeps_the_query(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("the embedding model could not load")

    monkeypatch.setattr("app.search.service.make_embedder", broken)
    async with started_runtime() as runtime:
        assert runtime.parts.search is None
        panel = _panel(qtbot, runtime, "en")
        assert panel.status.text() == "Search is not available: the embedding model could not load"
        assert not panel.search_button.isEnabled()
        assert not panel.research_button.isEnabled()
        assert not panel.index_bar.isVisible()
        assert not panel.reindex_button.isVisible()
        qtbot.keyClicks(panel.query, "Who designed the Bombe?")
        qtbot.keyClick(panel.query, Qt.Key.Key_Return)
        assert panel.query.text() == "Who designed the Bombe?"
        assert panel.status.text() == "Search is not available: the embedding model could not load"
        assert not panel.busy

        switch_language("ja")
        assert panel.status.text() == "検索は利用できません: the embedding model could not load"
        panel.detach()


class QueryFailingEmbedder(HashingEmbedder):
    """Embeds documents; fails on every query (the Embedder port of a model that broke after indexing)."""

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        if query:
            raise RuntimeError("the embedding model crashed")
        return super().embed(texts, query=query)


async def test_an_engine_error_is_shown_in_the_panel_and_the_query_stays(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("app.search.service.make_embedder", QueryFailingEmbedder)
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        await _indexed(panel, "4 documents indexed (4 new or changed)")

        await _search(qtbot, panel, "Who designed the Bombe?")
        assert panel.status.text() == "Search failed: the embedding model crashed"
        assert panel.query.text() == "Who designed the Bombe?"
        assert "Traceback" not in panel.status.text()

        qtbot.mouseClick(panel.research_button, Qt.MouseButton.LeftButton)
        await _idle(panel)
        assert panel.research_status.text() == "Research failed: the embedding model crashed"
        assert not panel.research_busy.isVisible()

        qtbot.keyClick(panel.query, Qt.Key.Key_Return)  # the panel still works: the same error, no crash
        await _idle(panel)
        assert panel.status.text() == "Search failed: the embedding model crashed"
        panel.detach()


async def test_a_blank_query_asks_for_a_question(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        qtbot.keyClicks(panel.query, "   ")
        qtbot.keyClick(panel.query, Qt.Key.Key_Return)
        assert panel.status.text() == "Type a question first."
        assert not panel.busy
        panel.detach()


async def test_typing_a_query_loads_the_query_model_while_the_user_writes(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = HashingEmbedder()
    monkeypatch.setattr("app.search.service.make_embedder", lambda: embedder)
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        await _indexed(panel, "4 documents indexed (4 new or changed)")
        assert not embedder.queried.is_set()  # nothing loads it at start: nobody may search

        qtbot.keyClicks(panel.query, "Who wr")  # the first key starts loading it, on the query embedding thread
        assert await asyncio.to_thread(embedder.queried.wait, 10)
        assert embedder.query_threads == {"search-index-query-embedding"}
        assert [texts for texts, query in embedder.calls if query] == [("warm-up",)]  # once, and no search ran

        await _search(qtbot, panel, "Who wrote the first computer program?")
        assert _hits(panel, "fused")
        panel.detach()
