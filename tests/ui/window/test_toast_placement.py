"""Where toasts go in the main window: stacked one under the other without overlapping, each as tall as its words
need, and over no tab bar and no button (they covered the side panel's tabs)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QAbstractButton, QTabBar, QWidget
from pytestqt.qtbot import QtBot

from tests.ui.conftest import started_runtime
from ui.window.main_window import MainWindow


def _in_window(widget: QWidget, window: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


@pytest.mark.parametrize("size", [(1024, 700), (1360, 820)])
async def test_two_toasts_are_stacked_apart_and_cover_no_tab_bar_or_button(qtbot: QtBot, madoi_home: Path,
                                                                          size: tuple[int, int]) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.resize(*size)
        window.show()
        await window.attach()
        qtbot.waitExposed(window)
        area = window.extras.notifications
        area.notify("Madoi started with 1 problem", "Other programs cannot connect to Madoi right now: port 8737 is "
                    "in use by another program. Change it in Settings > Bridge.", "warning", timeout_ms=0)
        area.notify("Error in search", "A longer text that wraps over two or three lines in the toast, as an "
                    "error's summary does; Madoi keeps running.", "error", timeout_ms=0)
        await asyncio.sleep(0.05)
        first, second = (_in_window(toast, window) for toast in area.visible_toasts)
        assert not first.intersects(second), (first, second)
        assert second.top() > first.bottom()  # the newer under the older
        for toast in area.visible_toasts:  # every line of a toast shows: none squeezed by its neighbour
            assert toast.height() >= toast.heightForWidth(toast.width()) > 0
        controls = [w for w in window.findChildren(QWidget) if isinstance(w, QTabBar | QAbstractButton)
                    and w.isVisible() and not area.isAncestorOf(w)]
        assert any(isinstance(w, QTabBar) for w in controls)
        for toast, place in zip(area.visible_toasts, (first, second), strict=True):
            for control in controls:
                assert not place.intersects(_in_window(control, window)), \
                    f"{toast.notification.title!r} covers {control.objectName() or type(control).__name__}"
        window.close()
