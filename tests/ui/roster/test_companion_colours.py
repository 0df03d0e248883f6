"""One colour per companion: the default cast's three are far apart (three purples were hard to tell apart), and
the editor shows the colour the window paints the companion in (it said pink where the window showed teal)."""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from tests.ui.conftest import started_runtime
from ui.roster.colors import PALETTE, colour_distance, companion_color
from ui.window.main_window import MainWindow

DEFAULT_CAST = ("akari", "hina", "souta")
FAR_APART = 35.0  # CIE76: well beyond "another shade of the same colour"


def test_the_palette_has_no_two_look_alikes() -> None:
    for a, b in itertools.combinations(PALETTE, 2):
        assert colour_distance(QColor(a), QColor(b)) > 25, (a, b)


async def test_the_default_cast_s_colours_are_far_apart_and_the_editor_shows_the_window_s(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        shown = {companion: companion_color(companion) for companion in DEFAULT_CAST}
        for (a, colour_a), (b, colour_b) in itertools.combinations(shown.items(), 2):
            assert colour_distance(colour_a, colour_b) >= FAR_APART, \
                f"{a} {colour_a.name()} and {b} {colour_b.name()} look alike"
        editor = window.companions_desk.open_editor()
        for row in range(editor.list.count()):
            editor.list.setCurrentRow(row)
            companion = editor.identity.card_id.text()
            assert editor.looks.colour_button.text() == companion_color(companion).name(), companion
        editor.close()
        window.close()
