"""The conversation list: the stored conversations, newest first; start a new one, switch, delete (after asking).

Switching and deleting go through the conversation history (``ui.window.panel_ports.ConversationHistory``), which
announces the active conversation on the bus; this list and the chat view follow that announcement, so a switch made
elsewhere (a menu, a shortcut) shows here too. The list is a ``QListView`` over :class:`ConversationsModel`.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, Final

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.conversations.active import ActiveConversationChanged
from companions.common.tasks import TaskSet
from companions.wire.bus import Bus, BusItem
from companions.wire.protocol import Message
from ui.chat.conversation_model import ID_ROLE, ConversationsModel
from ui.chat.texts import chat_text
from ui.window.attached import Retranslating
from ui.window.bus_bridge import BusFollower
from ui.window.naming import named
from ui.window.panel_ports import ConversationHistory

log = logging.getLogger(__name__)

REFRESH_DELAY_MS: Final = 400  # new messages re-sort the list at most this often


class _ConversationItems(QListView):
    """The list itself; the Delete key asks to delete the selected conversation."""

    delete_requested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Delete:
            self.delete_requested.emit()
            return
        super().keyPressEvent(event)


class ConversationList(Retranslating, QWidget):
    """The stored conversations (``history``). Call :meth:`attach` after the runtime started, :meth:`detach` before
    it stops."""

    refreshed = Signal()  # the list shows the store's current conversations
    confirmation_shown = Signal(QMessageBox)  # the delete question, open (window-modal, not blocking the loop)
    failed = Signal(str)
    new_requested = Signal()  # New or Ctrl+N: the window puts the focus in the message box at once
    started_new = Signal()  # ... and once the active one is the new, empty one (app/conversations/greetings.py)

    def __init__(self, bus: Bus, history: ConversationHistory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.title = title = QLabel(chat_text("conversations"))
        title.setObjectName("conversationListTitle")
        self.model = ConversationsModel(self)
        self.items = named(_ConversationItems(), "conversationList")
        self.items.setModel(self.model)
        self.model.font = self.items.font()
        self.items.setWordWrap(True)
        self.items.setSpacing(3)
        self.items.activated.connect(self._on_activated)
        self.items.clicked.connect(self._on_activated)
        self.items.delete_requested.connect(self.ask_delete_selected)
        self.new_button = named(QPushButton(chat_text("new")), "newConversationButton")
        self.new_button.setToolTip(chat_text("new.tooltip"))
        self.new_button.clicked.connect(self.new_conversation)
        self.delete_button = named(QPushButton(chat_text("delete")), "deleteConversationButton")
        self.delete_button.setToolTip(chat_text("delete.tooltip"))
        self.delete_button.clicked.connect(self.ask_delete_selected)
        self.error = named(QLabel(), "conversationListError")
        self.error.setWordWrap(True)
        self.error.setProperty("result", "error")
        self.error.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.items, 1)
        layout.addWidget(self.error)
        layout.addLayout(buttons)
        title.setBuddy(self.items)
        self.confirmation: QMessageBox | None = None
        self._bus_link = BusFollower(bus, ("messages", "events"))
        self._tasks = TaskSet("conversation-list")
        self._busy = False
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.setInterval(REFRESH_DELAY_MS)
        self._later.timeout.connect(self.refresh)

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def attach(self) -> None:
        self._bus_link.follow(self, self._on_item)
        await self._refresh()

    def detach(self) -> None:
        self._bus_link.stop()
        self._later.stop()
        self._tasks.cancel()

    def retranslate(self) -> None:
        self.title.setText(chat_text("conversations"))
        for button, key in ((self.new_button, "new"), (self.delete_button, "delete")):
            button.setText(chat_text(key))
            button.setToolTip(chat_text(f"{key}.tooltip"))
        self.model.retranslate()

    # -- what the list shows ---------------------------------------------------------------------------------
    def conversation_ids(self) -> list[int]:
        return [c.id for c in self.model.conversations()]

    def labels(self) -> list[str]:
        """The rows as the user reads them (title, then the message count and time)."""
        return [self.model.label(c) for c in self.model.conversations()]

    def current_id(self) -> int | None:
        """The conversation of the selected row (Delete acts on it)."""
        index = self.items.currentIndex()
        return int(index.data(ID_ROLE)) if index.isValid() else None

    def index_for(self, conversation_id: int) -> QModelIndex:
        row = self.model.row_of(conversation_id)
        return self.model.index(row) if row is not None else QModelIndex()

    def select(self, conversation_id: int) -> None:
        self.items.setCurrentIndex(self.index_for(conversation_id))

    def refresh(self) -> None:
        self._spawn(self._refresh())

    async def _refresh(self) -> None:
        conversations = await self.history.stored()
        active = self.history.active_id()
        self.items.blockSignals(True)
        try:
            self.model.set_conversations(conversations, active)
            if active is not None:
                self.items.setCurrentIndex(self.index_for(active))
        finally:
            self.items.blockSignals(False)
        self.refreshed.emit()

    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, ActiveConversationChanged):
            self._later.stop()
            self.refresh()
        elif isinstance(item, Message) and not self._later.isActive():
            self._later.start()  # the title and the order change as the conversation goes on

    # -- actions ---------------------------------------------------------------------------------------------
    def new_conversation(self) -> None:
        self.new_requested.emit()
        self._spawn(self._run(self._new()))

    async def _new(self) -> None:
        active = self.history.active_id()
        current = self.model.info(active) if active is not None else None
        if current is None or current.message_count != 0:  # (an empty active conversation is the new one)
            await self.history.new()
        self.started_new.emit()

    def _on_activated(self, index: QModelIndex) -> None:
        conversation_id = int(index.data(ID_ROLE))
        if conversation_id != self.history.active_id():
            self._spawn(self._run(self.history.switch(conversation_id)))

    def ask_delete_selected(self) -> None:
        """Asks whether to delete the selected conversation (a window-modal question); deletes on yes."""
        conversation_id = self.current_id()
        if conversation_id is None or self._busy:
            return
        info = self.model.info(conversation_id)
        title = (info.title if info is not None else "") or chat_text("untitled")
        box = QMessageBox(QMessageBox.Icon.Warning, chat_text("confirm.title"),
                          chat_text("confirm.body", title=" ".join(title.split()),
                                    n=info.message_count if info is not None else 0),
                          QMessageBox.StandardButton.NoButton, self)
        box.setObjectName("deleteConfirmation")
        delete = box.addButton(chat_text("confirm.delete"), QMessageBox.ButtonRole.DestructiveRole)
        delete.setObjectName("confirmDeleteButton")
        cancel = box.addButton(chat_text("confirm.cancel"), QMessageBox.ButtonRole.RejectRole)
        cancel.setObjectName("cancelDeleteButton")
        box.setDefaultButton(cancel)  # Enter keeps the conversation; deleting takes a deliberate choice
        box.setEscapeButton(cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.setProperty("conversation_id", conversation_id)
        box.buttonClicked.connect(self._on_confirmation)
        box.finished.connect(box.deleteLater)
        self.confirmation = box
        box.open()  # not exec(): the event loop (and the companions) keep running while the user decides
        self.confirmation_shown.emit(box)

    def _on_confirmation(self, button: QPushButton) -> None:
        box = self.confirmation
        self.confirmation = None
        if box is None or button.objectName() != "confirmDeleteButton":
            return
        conversation_id = int(box.property("conversation_id"))
        self._spawn(self._run(self.history.delete(conversation_id)))

    async def _run(self, action: Coroutine[Any, Any, object]) -> None:
        """Runs one user action at a time; a failure is shown under the list, the list is refreshed after."""
        if self._busy:
            action.close()
            return
        self._busy = True
        self.new_button.setEnabled(False)
        self.delete_button.setEnabled(False)
        try:
            await action
            self.error.hide()
        except Exception as err:
            log.exception("conversation list action failed")
            self.error.setText(chat_text("failed", error=err))
            self.error.show()
            self.failed.emit(str(err))
        finally:
            self._busy = False
            self.new_button.setEnabled(True)
            self.delete_button.setEnabled(True)
        await self._refresh()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        self._tasks.spawn(coro, name="conversation-list")  # a failure is logged by the task set
