"""Keyboard focus shows (before: nothing showed it on the conversation list and the right-hand panels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from tests.ui.conftest import started_runtime
from ui.window.main_window import MainWindow
from ui.window.theme import theme_manager


def _image(widget: QWidget) -> QImage:
    return widget.grab().toImage()  # painted now, in the state it is in


def _changed_frame(before: QImage, after: QImage, *, bottom_only: bool = False) -> float:
    """The share of the pixels along the widget's edges (3 px deep, corners left out) that changed: a frame drawn
    around it shows there; a selected item changing shade or a dotted rectangle on one item does not."""
    assert before.size() == after.size()
    h, w = before.height(), before.width()
    a = np.frombuffer(before.constBits(), np.uint8, before.sizeInBytes()).reshape(h, -1)[:, :w * 4]
    b = np.frombuffer(after.constBits(), np.uint8, after.sizeInBytes()).reshape(h, -1)[:, :w * 4]
    changed = (a != b).reshape(h, w, 4).any(axis=2)
    edges = [changed[:3, 8:-8].any(axis=0), changed[-3:, 8:-8].any(axis=0),
             changed[8:-8, :3].any(axis=1), changed[8:-8, -3:].any(axis=1)]
    return float((edges[1] if bottom_only else np.concatenate(edges)).mean())


async def test_every_area_looks_different_with_the_keyboard_focus(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        await window.attach()
        try:
            window.side.setCurrentIndex(0)
            areas: dict[str, QWidget] = {
                "conversations": window.conversations.items, "roster": window.roster.list,
                "turns table": window.turns.votes, "turns history": window.turns.history,
                "new conversation button": window.conversations.new_button,
                "side tabs": window.side.tabBar(),
            }
            unfocused = {}
            for name, widget in areas.items():
                window.chat.input.setFocus(Qt.FocusReason.OtherFocusReason)
                unfocused[name] = _image(widget)
            for name, widget in areas.items():
                widget.setFocus(Qt.FocusReason.TabFocusReason)
                assert widget.hasFocus(), name
                # The tab bar is underlined but for the open tab (and that tab's title changes colour); everything
                # else gets a frame all around.
                tabs = name == "side tabs"
                changed = _changed_frame(unfocused[name], _image(widget), bottom_only=tabs)
                assert changed > (0.5 if tabs else 0.9), f"no frame shows the focus on the {name}"
        finally:
            app = QApplication.instance()
            assert isinstance(app, QApplication)
            theme_manager(app).reset()
            window.close()
