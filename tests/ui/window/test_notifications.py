"""Notifications: errors anywhere become toasts in the window's corner, the log file gets the traceback, and
the app keeps running."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QPushButton
from pytestqt.qtbot import QtBot

from app.runtime.error_reporting import install_error_reporting
from tests.conftest import log_text
from tests.ui.conftest import signal_fired, started_runtime
from ui.window.main_window import MainWindow
from ui.window.notifications import NotificationArea


def _window(qtbot: QtBot) -> QMainWindow:
    window = QMainWindow()
    qtbot.addWidget(window)
    window.resize(700, 500)
    window.show()
    return window


async def test_a_notification_shows_in_the_corner_and_the_close_button_dismisses_it(qtbot: QtBot) -> None:
    window = _window(qtbot)
    area = NotificationArea(window, timeout_ms=0)
    area.notify("Camera", "no camera found", "warning")
    assert area.isVisible()
    [toast] = area.visible_toasts
    assert toast.notification.level == "warning"
    assert area.geometry().right() <= window.width()
    assert area.geometry().left() > window.width() // 3  # the right-hand side, out of the chat's way
    assert area.geometry().bottom() <= window.height()
    async with signal_fired(area.dismissed):
        qtbot.mouseClick(toast.close_button, Qt.MouseButton.LeftButton)
    assert area.visible_toasts == []
    assert not area.isVisible()
    assert [n.text for n in area.history] == ["no camera found"]


async def test_notifications_fade_away_by_themselves(qtbot: QtBot) -> None:
    window = _window(qtbot)
    area = NotificationArea(window, timeout_ms=30)
    async with signal_fired(area.dismissed):
        area.notify("Saved", "settings saved")
    assert area.visible_toasts == []
    assert len(area.history) == 1


async def test_only_the_newest_stay_on_screen_but_the_history_keeps_them(qtbot: QtBot) -> None:
    window = _window(qtbot)
    area = NotificationArea(window, timeout_ms=0, max_visible=3, keep=4)
    for i in range(6):
        area.notify("n", f"message {i}")
    assert [t.notification.text for t in area.visible_toasts] == ["message 3", "message 4", "message 5"]
    assert [n.text for n in area.history] == ["message 2", "message 3", "message 4", "message 5"]


async def test_an_exception_in_a_slot_shows_a_toast_logs_the_traceback_and_the_window_lives_on(
        qtbot: QtBot, madoi_home: Path, log_file: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        window.show()
        area = NotificationArea(window, timeout_ms=0)
        reporter = install_error_reporting(asyncio.get_running_loop())
        reporter.add_callback(area.report_error)
        try:
            button = QPushButton("explode", window)

            def broken_slot() -> None:
                raise RuntimeError("the slot broke")

            button.clicked.connect(broken_slot)
            async with signal_fired(area.shown):
                qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

            def broken_callback() -> None:
                raise ValueError("the callback broke")

            async with signal_fired(area.shown):
                asyncio.get_running_loop().call_soon(broken_callback)
        finally:
            reporter.uninstall()
        texts = [t.notification.text for t in area.visible_toasts]
        assert texts[0].startswith("RuntimeError: the slot broke")
        assert texts[1].startswith("ValueError: the callback broke")
        assert "円居は動き続けます" in texts[0]  # in the window's language (the settings': Japanese here)
        assert "broken_slot" in area.visible_toasts[0].toolTip()
        log = log_text(log_file)
        assert 'raise RuntimeError("the slot broke")' in log
        assert "the callback broke" in log
        assert window.isVisible()
        async with signal_fired(window.chat.message_shown):
            window.chat.input.insertPlainText("still here")
            window.chat.submit()  # the chat itself: the window sends only once a model is there (test_first_run)
        window.close()


@pytest.mark.parametrize("size", [(1024, 700), (1440, 900)])
async def test_toasts_never_cover_the_message_box_or_send(qtbot: QtBot, madoi_home: Path,
                                                          size: tuple[int, int]) -> None:
    """Before: toasts in the bottom-right corner covered Send. Four of them (the most shown at once), long."""
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.resize(*size)
        window.show()
        await window.attach()
        qtbot.waitExposed(window)
        area = window.extras.notifications
        for i in range(4):
            area.notify(f"Notice {i}", "A longer text that wraps over two or three lines in the toast, as an "
                        "error's summary does.", "warning", timeout_ms=0)
        for widget in (window.chat.input, window.chat.send_button):
            place = widget.rect().translated(widget.mapTo(window, widget.rect().topLeft()))
            for toast in area.visible_toasts:
                covered = toast.rect().translated(toast.mapTo(window, toast.rect().topLeft()))
                assert not covered.intersects(place), f"{toast.notification.title} covers {widget.objectName()}"
        assert area.geometry().top() >= window.menuBar().geometry().bottom()  # under the menu bar
        window.close()


async def test_a_toast_s_action_does_what_it_says_and_closes_the_toast(qtbot: QtBot) -> None:
    window = _window(qtbot)
    area = NotificationArea(window, timeout_ms=0)
    done: list[str] = []
    area.notify("Many stand-in lines", "A larger model would help.", action=("Open the model settings…",
                                                                              lambda: done.append("opened")))
    [toast] = area.visible_toasts
    assert toast.action_button is not None
    assert toast.action_button.text() == "Open the model settings…"
    async with signal_fired(area.dismissed):
        qtbot.mouseClick(toast.action_button, Qt.MouseButton.LeftButton)
    assert done == ["opened"]
    assert area.history[-1].action == "Open the model settings…"
