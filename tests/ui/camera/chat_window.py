"""A click on a line of the main window's chat, as a person makes it."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from ui.window.main_window import MainWindow


def click_line(qtbot: QtBot, window: MainWindow, text: str) -> None:
    """Clicks the chat's line that holds ``text``, as a person would."""
    view = window.chat.view
    cursor = view.document().find(text)
    assert not cursor.isNull(), f"{text!r} is not in the chat"
    cursor.setPosition(cursor.selectionStart() + 2, QTextCursor.MoveMode.MoveAnchor)
    view.setTextCursor(cursor)
    view.ensureCursorVisible()
    point = view.cursorRect(cursor).center() + QPoint(2, 0)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
