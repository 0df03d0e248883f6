"""The companion editor's list: every companion with its picture (a card held until the user approves it marked
⚠), and Add, Duplicate and Remove under it. The editor acts on the buttons: each changes the form too."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QHBoxLayout, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.cards.library import CardEntry
from ui.cards.editor_texts import editor_button
from ui.roster.avatars import avatar_pixmap
from ui.window.naming import named

AVATAR: Final = 32


class CompanionList(QWidget):
    """The list and its buttons; ``language`` is the one the names are shown in."""

    def __init__(self, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.language = language
        self.list = named(QListWidget(), "companionList")
        self.list.setIconSize(QSize(AVATAR, AVATAR))
        self.add_button = editor_button("add", language)
        self.duplicate_button = editor_button("duplicate", language)
        self.remove_button = editor_button("remove", language)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.duplicate_button, self.remove_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)

    @property
    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def fill(self, entries: Iterable[CardEntry]) -> None:
        """Lists ``entries`` anew (no row current, and the list says nothing of it)."""
        self.list.blockSignals(True)
        self.list.clear()
        for entry in entries:
            name = entry.card.name(self.language)
            label = name if entry.trusted else f"{name}  ⚠"
            item = QListWidgetItem(QIcon(avatar_pixmap(entry.id, name, AVATAR)), label)
            item.setData(Qt.ItemDataRole.UserRole, entry.id)
            item.setToolTip(f"{name} ({entry.id}) — {entry.file}")
            self.list.addItem(item)
        self.list.blockSignals(False)

    def mark_current(self, row: int) -> None:
        """Makes ``row`` current without saying so (the form shown stays)."""
        self.list.blockSignals(True)
        self.list.setCurrentRow(row)
        self.list.blockSignals(False)

    def show_actions(self, *, card: bool, removable: bool) -> None:
        """Duplicate needs a card shown; Remove a card of the user's that is no sample."""
        self.remove_button.setEnabled(removable)
        self.duplicate_button.setEnabled(card)
