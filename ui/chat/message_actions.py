"""What group chat apps have beside the message box: a Stop button while the companions talk, and on a message (its
context menu, or the keyboard's menu key): copy it, edit or delete it (the stored conversation and every companion's
memory follow: ``ConversationHistory.revise``), and have the last companion line said again (it goes, and its speaker
takes the turn anew on what came before).

Stop is the Turns panel's Stop (and Shift+Esc): ``StopConversation``, the speech and the thinking in progress stop
and the conversation ends until the user's next message. Copy puts the message's text (without its header) on the
clipboard.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import replace
from typing import Final

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QGuiApplication, QTextFrame
from PySide6.QtWidgets import QHBoxLayout, QInputDialog, QMenu, QPushButton

from app.conversations.active import MessageRevised
from companions.common.tasks import TaskSet
from companions.conversation.readmodel import ConversationChanged
from companions.wire.bus import Bus, BusItem
from ui.chat.panel import ChatPanel
from ui.chat.texts import chat_text
from ui.chat.transcript import KEY_PROPERTY
from ui.window.attached import Attached
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named
from ui.window.panel_ports import ConversationControl, ConversationHistory, People

_TEXTS: Final = Texts("message_actions", {
    "stop": QT_TRANSLATE_NOOP("message_actions", "Stop"),
    "stop.tooltip": QT_TRANSLATE_NOOP(
        "message_actions", "The companions stop speaking and thinking; the conversation ends until you write "
                           "(Shift+Esc)"),
    "copy_message": QT_TRANSLATE_NOOP("message_actions", "Copy this message"),
    "copy": QT_TRANSLATE_NOOP("message_actions", "Copy the selection"),
    "edit": QT_TRANSLATE_NOOP("message_actions", "Edit…"),
    "edit.title": QT_TRANSLATE_NOOP("message_actions", "Edit the message"),
    "edit.label": QT_TRANSLATE_NOOP("message_actions", "The companions will remember it as written here:"),
    "delete": QT_TRANSLATE_NOOP("message_actions", "Delete (the companions forget it)"),
    "again": QT_TRANSLATE_NOOP("message_actions", "Say it again"),
    "ok": QT_TRANSLATE_NOOP("message_actions", "Save"),
    "cancel": QT_TRANSLATE_NOOP("message_actions", "Cancel"),
})


def _text(key: str, language: str | None = None) -> str:
    return _TEXTS.text(key, language)


class MessageActions(Attached, QObject):
    """Adds the Stop button to ``chat``'s input row and the message menu to its transcript (a child of ``chat``)."""

    def __init__(self, chat: ChatPanel, bus: Bus, control: ConversationControl, history: ConversationHistory,
                 *, people: People) -> None:
        super().__init__(chat)
        self.chat = chat
        self.control = control
        self.history = history
        self.people = people
        self.stop_button = named(QPushButton(), "chatStopButton")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        column = chat.layout()
        assert column is not None
        rows = [item.layout() for item in map(column.itemAt, range(column.count())) if item is not None]
        row = next(r for r in rows if isinstance(r, QHBoxLayout) and r.indexOf(chat.send_button) >= 0)
        row.insertWidget(row.indexOf(chat.send_button), self.stop_button)
        chat.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        chat.view.customContextMenuRequested.connect(self._menu)
        self.follow_bus(bus, ("events",))
        self._tasks = TaskSet("message-actions")
        self.retranslate()

    def on_attach(self) -> None:
        self.stop_button.setEnabled(self.control.view().status == "running")

    def on_detach(self) -> None:
        self._tasks.cancel()

    def retranslate(self) -> None:
        """The Stop button's words again (the window calls it on LanguageChange)."""
        self.stop_button.setText(_text("stop"))
        self.stop_button.setToolTip(_text("stop.tooltip"))

    def stop(self) -> None:
        self.control.stop()

    def on_item(self, item: BusItem) -> None:
        if isinstance(item, ConversationChanged):
            self.stop_button.setEnabled(item.view.status == "running")
        elif isinstance(item, MessageRevised) and self.chat.view.has(item.message_id):
            if item.text is None:
                self.chat.view.remove(item.message_id)
            else:
                self.chat.show_revised(item.message_id, item.text)
                header = self.chat.view.header(item.message_id)
                if header is not None:  # marked as edited (a filler's note no longer applies to the user's words)
                    self.chat.view.set_header(item.message_id,
                                              replace(header, note=chat_text("note.edited")))

    # -- a message's menu ----------------------------------------------------------------------------------------
    def message_at(self, pos: QPoint) -> str | None:
        """The key (message id) of the bubble at ``pos`` in the transcript's viewport, if any."""
        frame: QTextFrame | None = self.chat.view.cursorForPosition(pos).currentFrame()
        root = self.chat.view.document().rootFrame()
        while frame is not None and frame.parentFrame() is not None and frame.parentFrame() is not root:
            frame = frame.parentFrame()
        if frame is None or frame is root:
            return None
        key = frame.frameFormat().property(KEY_PROPERTY)
        return str(key) if key else None

    def message_text(self, key: str) -> str:
        return self.chat.message_text(key)

    def revise(self, key: str, text: str | None) -> asyncio.Task[None]:
        """Edits (``text``) or deletes (None) the message ``key``; the window follows ``MessageRevised``."""
        return self._tasks.spawn(self.history.revise(key, text), name="revise-message")

    def say_again(self, key: str) -> asyncio.Task[None]:
        """The last message, a companion's, goes and its speaker answers again what came before it."""
        return self._tasks.spawn(self._say_again(key), name="say-again")

    async def _say_again(self, key: str) -> None:
        conversation = self.history.active_id()
        if conversation is None:
            return
        stored = await self.history.messages(conversation, limit=1)
        speaker = stored[-1].message.params.from_ if stored else None
        if not stored or stored[-1].message.params.id != key or speaker not in self.people.companion_ids():
            return  # only the newest line, and only a companion's
        await self.history.revise(key, None)
        self.control.force(stored[-1].message.params.from_)

    def edit(self, key: str) -> QInputDialog:
        """Opens the editor (open(), not exec(): the loop runs on); saving revises the message."""
        dialog = QInputDialog(self.chat)
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setWindowTitle(_text("edit.title"))
        dialog.setLabelText(_text("edit.label"))
        dialog.setOkButtonText(_text("ok"))
        dialog.setCancelButtonText(_text("cancel"))
        dialog.setTextValue(self.message_text(key))
        dialog.textValueSelected.connect(functools.partial(self._edited, key))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _edited(self, key: str, text: str) -> None:
        if text.strip():
            self.revise(key, text.strip())

    def copy_message(self, key: str) -> None:
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(self.message_text(key))

    def _menu(self, pos: QPoint) -> None:
        menu = QMenu(self.chat.view)
        key = self.message_at(pos)
        if key is not None:
            menu.addAction(_text("copy_message")).triggered.connect(
                functools.partial(self.copy_message, key))
            if not self.chat.view.is_provisional(key):
                menu.addAction(_text("edit")).triggered.connect(functools.partial(self.edit, key))
                menu.addAction(_text("delete")).triggered.connect(
                    functools.partial(self.revise, key, None))
                finals = [b.key for b in self.chat.view.bubbles() if not b.provisional]
                if finals and finals[-1] == key:
                    menu.addAction(_text("again")).triggered.connect(
                        functools.partial(self.say_again, key))
        if self.chat.view.textCursor().hasSelection():
            menu.addAction(_text("copy")).triggered.connect(self.chat.view.copy)
        if menu.isEmpty():
            menu.deleteLater()
            return
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(self.chat.view.viewport().mapToGlobal(pos))
