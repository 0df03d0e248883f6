"""The search panel in a short window (before: at 1024x700 the classification's weights and intent rows were
squeezed over each other and the research box was a line high): it scrolls instead, every row whole."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from companions.search.classify.query_classifier import QueryClassification
from companions.wire.bus import InProcessBus
from tests.ui.conftest import switch_language
from tests.ui.fakes import FakePeople, NoSearch
from ui.search.panel import RESEARCH_MIN_HEIGHT, SearchPanel
from ui.search.wording import FIELDS

SIDE_AT_1024 = (330, 560)  # the side panel's size in a 1024x700 window


@pytest.mark.parametrize("language", ["ja", "en"])
async def test_a_short_panel_scrolls_and_shows_every_classification_row_whole(qtbot: QtBot, language: str) -> None:
    switch_language(language)
    panel = SearchPanel(InProcessBus(), NoSearch(), FakePeople())
    qtbot.addWidget(panel)
    panel.resize(*SIDE_AT_1024)
    panel.show()
    qtbot.waitExposed(panel)
    panel._show_classification(QueryClassification(  # what a relationship question shows (its intent is long)
        type="relationship", confidence=0.9, extracted_entities=("清水寺", "金閣寺"), relation_hint="comparison",
        keywords=("清水寺", "金閣寺", "違い"), intent="entity relationship question (classified by the rules)"),
        None)

    def whole(field: str) -> bool:
        value = panel.fields[field]
        return bool(value.text()) and value.height() >= value.heightForWidth(value.width())

    for field in FIELDS:  # once the layout settled (posted layout requests, a pass per level)
        qtbot.waitUntil(lambda field=field: whole(field), timeout=2000)
    assert panel.research_box.height() >= RESEARCH_MIN_HEIGHT
    assert panel.scroll_area.verticalScrollBar().maximum() > 0  # the rest is a scroll away, not cut off
