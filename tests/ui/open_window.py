"""The main window on a started runtime, as the tests that drive the whole window open it: shown at 1200x760 and
attached to the runtime, closed and deleted by pytest-qt after the test."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.runtime.runtime import Runtime
from ui.window.main_window import MainWindow


async def open_window(qtbot: QtBot, runtime: Runtime) -> MainWindow:
    window = MainWindow(runtime)
    qtbot.addWidget(window)
    window.resize(1200, 760)
    window.show()
    await window.attach()
    return window
