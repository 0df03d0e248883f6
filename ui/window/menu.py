"""The main window's Conversation menu and its keys: a new conversation (Ctrl+N), interrupt (Esc), stop
(Ctrl+Shift+S, or Shift+Esc where the window manager leaves it to the window), quit (Ctrl+Q).

Every command is a window action, so its key works wherever the focus is in the window, even with the menu bar
hidden; the menu says which key does what.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

_TEXTS: Final = Texts("window_menu", {
    "menu": QT_TRANSLATE_NOOP("window_menu", "&Conversation"),
    "new": QT_TRANSLATE_NOOP("window_menu", "&New conversation"),
    "interrupt": QT_TRANSLATE_NOOP("window_menu", "&Interrupt (they stop and listen)"),
    "stop": QT_TRANSLATE_NOOP("window_menu", "&Stop the conversation"),
    "quit": QT_TRANSLATE_NOOP("window_menu", "&Quit Madoi"),
})


def _text(key: str, language: str | None = None) -> str:
    return _TEXTS.text(key, language)


class ConversationMenu:
    """Adds the menu to ``window``'s menu bar; ``commands`` maps "new", "interrupt", "stop", "quit" to slots."""

    def __init__(self, window: QMainWindow, commands: dict[str, Callable[[], object]]) -> None:
        keys: dict[str, list[QKeySequence]] = {
            "new": [QKeySequence("Ctrl+N")],
            "interrupt": [QKeySequence("Esc")],
            # Shift+Esc first was taken by window managers (icewm's window menu): Ctrl+Shift+S is the one shown.
            "stop": [QKeySequence("Ctrl+Shift+S"), QKeySequence("Shift+Esc")],
            # The platform's Quit key where it has one (Cmd+Q on macOS); Ctrl+Q elsewhere (Qt gives Linux none).
            "quit": QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")],
        }
        self.menu: QMenu = named(window.menuBar().addMenu(""), "conversationMenu")
        self.actions: dict[str, QAction] = {}
        for key, slot in commands.items():
            action = named(QAction(window), f"{key}Action")
            action.setShortcuts(keys[key])
            action.triggered.connect(slot)
            if key == "quit":
                self.menu.addSeparator()
            self.menu.addAction(action)
            window.addAction(action)  # the key works with the menu bar hidden too
            self.actions[key] = action
        self.retranslate()

    def retranslate(self) -> None:
        """The menu's words again (the window calls it on LanguageChange)."""
        self.menu.setTitle(_text("menu"))
        for key, action in self.actions.items():
            action.setText(_text(key))
