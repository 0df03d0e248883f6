"""The Search tab in the window: no stale "search is not available" once search runs, conversation hits
named as a person reads them (not ``conversation:1`` and ``akari:``), and a research note that does not claim no
model is configured when one failed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.search.research import ResearchResult
from companions.wire.protocol import Message
from tests.app.conversation_search import lines_found
from tests.ui.conftest import started_runtime
from ui.search.wording import research_html
from ui.window.main_window import MainWindow


async def test_the_window_made_before_search_started_does_not_say_it_is_unavailable(
        qtbot: QtBot, madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    window = MainWindow(runtime)  # as ui/window/launch.py does: the window shows while the runtime starts
    qtbot.addWidget(window)
    window.show()
    await runtime.start()
    try:
        await window.attach()
        assert runtime.parts.search is not None
        assert "利用できません" not in window.search_panel.status.text()
        window.close()
    finally:
        await runtime.stop()


async def test_conversation_hits_show_the_conversation_and_the_speakers_by_name(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        first = runtime.parts.conversations.active_id
        assert first is not None
        await runtime.store.add_message(first, Message.create(from_="user", message="流れ星を見た人はいますか"))
        await runtime.store.add_message(first, Message.create(from_="akari", message="きのう流れ星を三つ見ました"))
        await runtime.parts.conversations.new()  # leaving it indexes it
        assert runtime.parts.search is not None
        await lines_found(runtime.parts.search.engine, first, "流れ星", lambda lines: len(lines) == 2)
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        panel = window.search_panel
        panel.query.setText("流れ星")
        panel.search_button.click()
        await asyncio.wait_for(panel.wait_idle(), 30)
        fused = panel.views["fused"].toPlainText()
        assert f"会話 {first}" in fused
        assert "あかり:" in fused
        assert "あなた:" in fused
        assert "conversation:" not in fused
        assert "akari:" not in fused
        window.close()


def test_a_failed_model_is_not_called_missing_and_nothing_found_has_no_extract_note() -> None:
    failed = ResearchResult(question="q", answer="a", citations=[], queries=["q"], rounds=1, used_model=False,
                            notes=["synthesis: the server answered HTTP 500"])
    text = research_html(failed, "en", "#888")
    assert "did not write one (synthesis: the server answered HTTP 500)" in text
    assert "no language model is configured" not in text
    nothing = ResearchResult(question="q", answer="No sources were found for this question.", citations=[],
                             queries=["q"], rounds=1, used_model=False)
    assert "Extractive" not in research_html(nothing, "en", "#888")
