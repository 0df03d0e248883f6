"""The chat view: the stored history, new messages as they arrive, and the input box."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from companions.protocol import Message
from ui.naming import named


class MessageInput(QPlainTextEdit):
    """Enter sends, Shift+Enter inserts a newline."""

    submitted = Signal(str)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submit()
            return
        super().keyPressEvent(event)

    def submit(self) -> None:
        text = self.toPlainText().strip()
        if text:
            self.submitted.emit(text)
            self.clear()


class ChatPanel(QWidget):
    send_requested = Signal(str)
    message_shown = Signal(str)  # the message id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = named(QTextBrowser(), "chatView")
        self.view.setOpenExternalLinks(False)
        self.input = named(MessageInput(), "chatInput")
        self.input.setPlaceholderText(self.tr("Write to the companions… (Enter sends, Shift+Enter: new line)"))
        self.input.setFixedHeight(72)
        self.send_button = named(QPushButton(self.tr("Send")), "sendButton")
        self.send_button.clicked.connect(self.input.submit)
        self.input.submitted.connect(self.send_requested)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addLayout(row)
        self._shown_ids: set[str] = set()

    def add_message(self, message: Message) -> None:
        p = message.params
        if p.id in self._shown_ids:
            return
        self._shown_ids.add(p.id)
        who = html.escape(p.from_)
        text = html.escape(p.message).replace("\n", "<br>")
        self.view.append(f"<p><b>{who}</b>: {text}</p>")
        self.message_shown.emit(p.id)

    def clear_messages(self) -> None:
        self._shown_ids.clear()
        self.view.clear()

    @property
    def message_count(self) -> int:
        return len(self._shown_ids)
