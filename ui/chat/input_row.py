"""The chat view's input row: the message box (Enter sends, Shift+Enter: new line) and the addressee selector."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import QMenu, QPlainTextEdit, QToolButton, QWidget

from ui.chat.texts import chat_text
from ui.window.attached import Retranslating
from ui.window.naming import named


class MessageInput(QPlainTextEdit):
    """Enter sends, Shift+Enter inserts a newline. The text is cleared by whoever sent it, once it was sent."""

    submit_requested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submit_requested.emit()
            return
        super().keyPressEvent(event)

    def submit(self) -> None:
        """Asks to send the text, as Enter does."""
        self.submit_requested.emit()


class AddressSelector(Retranslating, QToolButton):
    """To whom the next message goes: everyone (``[]``), or the companions ticked in its menu."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolTip(chat_text("to.tooltip"))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.menu_ = named(QMenu(self), "addressMenu")
        self.setMenu(self.menu_)
        self.everyone = QAction(chat_text("everyone"), self)
        self.everyone.setCheckable(True)
        self.everyone.setChecked(True)
        self.everyone.triggered.connect(self._choose_everyone)
        self._companions: dict[str, QAction] = {}
        self._names: dict[str, str] = {}
        self.set_companions([])

    def retranslate(self) -> None:
        self.setToolTip(chat_text("to.tooltip"))
        self.everyone.setText(chat_text("everyone"))
        self._refresh()

    def set_companions(self, companions: list[tuple[str, str]]) -> None:
        """``(id, name)`` of the companions who can be addressed; ticks of those still present are kept."""
        chosen = set(self.addressees())
        self.menu_.clear()
        self.menu_.addAction(self.everyone)
        self.menu_.addSeparator()
        self._companions.clear()
        self._names = dict(companions)
        for companion_id, name in companions:
            action = QAction(name, self)
            action.setCheckable(True)
            action.setChecked(companion_id in chosen)
            action.setData(companion_id)
            action.triggered.connect(self._on_ticked)
            self.menu_.addAction(action)
            self._companions[companion_id] = action
        self._refresh()

    def companion_action(self, companion_id: str) -> QAction:
        return self._companions[companion_id]

    def addressees(self) -> list[str]:
        """The ids ticked, in roster order; empty means everyone."""
        return [cid for cid, action in self._companions.items() if action.isChecked()]

    def set_addressees(self, companion_ids: list[str]) -> None:
        for cid, action in self._companions.items():
            action.setChecked(cid in companion_ids)
        self._refresh()

    def _choose_everyone(self) -> None:
        self.set_addressees([])

    def _on_ticked(self) -> None:
        self._refresh()

    def _refresh(self) -> None:
        chosen = self.addressees()
        self.everyone.setChecked(not chosen)
        names = ", ".join(self._names[c] for c in chosen) if chosen else chat_text("everyone")
        self.setText(chat_text("to", names=names))
        self.changed.emit()
