"""At 1024x700 nothing a person reads is cut off (before: the Turns table's reasons and the search results were)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics
from pytestqt.qtbot import QtBot

from companions.llm.scripted import say, stall
from tests.ui.conftest import started_runtime
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from ui.window.main_window import MainWindow

REASONS = {"akari": "流れ星の話がしたい、昨日の夜に三つも見たから", "hina": "わたしも見たかったなあ、次はいつだろう",
           "souta": "しし座流星群の話ができる、極大日の話も"}


async def test_turns_and_search_fit_a_1024x700_window(qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, REASONS["akari"]))
    lines(cast["akari"], say("見た見た！流れ星がいくつも流れてて、思わず願いごとしちゃった。"))
    votes(cast["hina"], ("speak", 4, REASONS["hina"]), ("listen", 3, REASONS["hina"]))
    votes(cast["souta"], ("listen", 2, REASONS["souta"]), ("speak", 7, REASONS["souta"]))
    lines(cast["souta"], stall(text_first="昨日はしし座流星群の極大日だったんだ。"))
    async with scripted_runtime(cast) as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.resize(1024, 700)
        window.show()
        await window.attach()
        runtime.parts.conversations.send("こんばんは！昨日の夜、空を見た人いる？")
        turns = window.turns
        await until(turns.rendered, lambda: turns.view.turn is not None and turns.view.turn.number == 2, 30)
        await until(turns.rendered, lambda: len(turns.history_lines()) == 1, 30)
        assert window.width() == 1024
        table, model = turns.votes, turns.votes_model
        assert not table.horizontalScrollBar().isVisible()
        used = sum(table.columnWidth(c) for c in range(model.columnCount()))
        assert used <= table.viewport().width() + 1  # no column runs off to the right
        reason = model.columnCount() - 1
        metrics = QFontMetrics(table.font())
        for row in range(model.rowCount()):
            text = str(model.index(row, reason).data())
            if not text:
                continue
            needed = metrics.boundingRect(QRect(0, 0, table.columnWidth(reason) - 8, 10_000),
                                          Qt.TextFlag.TextWordWrap, text).height()
            assert table.rowHeight(row) >= needed, f"the reason {text!r} is cut off"
        assert not turns.history.horizontalScrollBar().isVisible()
        window.grab().save(str(madoi_home / "small-turns.png"))

        window.side.setCurrentIndex(1)
        panel = window.search_panel
        assert runtime.parts.search is not None
        search = runtime.parts.search
        await until(panel.index_changed, lambda: search.indexed is not None, 120)
        panel.query.setText("流れ星")
        panel.search()
        await asyncio.wait_for(panel.wait_idle(), 30)
        assert panel.views["fused"].height() >= 120  # several lines of the first hits, not one
        bar = panel.results.tabBar()
        assert all(bar.tabRect(i).right() <= bar.width() for i in range(bar.count()))  # every tab in sight
        window.close()



async def test_the_first_window_fits_a_small_screen(qtbot: QtBot, madoi_home: Path) -> None:
    """At the first start the window opened at 1280x800 whatever the screen (on a 1024x700 display, cut off)."""
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        screen = window.screen().availableGeometry()  # the offscreen platform's screen is 800x600
        assert screen.width() < 1280
        assert window.width() <= screen.width()
        assert window.height() <= screen.height()
        window.close()
