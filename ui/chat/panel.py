"""The chat view: the stored conversation, messages as they arrive, what companions are composing, who is speaking.

What it shows, and where it comes from (all from the bus it follows, on the GUI thread):
- ``Message`` (messages): a bubble in the sender's colour, with the sender's name, the emotion, the addressees.
- ``ConversationChanged`` (events): while conversation control lets a companion compose, a provisional bubble says
  so ("composing…", then "waiting for the floor…" once composed and the previous speech still plays).
- ``TextStreamed`` (events): the text the companion's model streams grows that bubble: the line of its ``speak``
  call (``kind="speech"``) or a plain-text reply. A line replaces whatever plain text the bubble showed (that text
  is never said), and a line written again (a second attempt) replaces the first; plain text after a line is
  left out. The companion's ``Message``, published when it takes the floor, replaces the bubble: one bubble,
  never two. Text that is never said (a cancelled or failed turn, a turn given up) disappears with its bubble.
- ``SpeakingChanged`` (events): the companion's latest message not yet spoken is highlighted while its voice
  plays (conversation control publishes a message, then voices it).
- ``ActiveConversationChanged`` (events): the stored history of the conversation switched to.
- ``ModelTrouble`` / ``ModelBack`` (events): the companions' language model stopped answering, or answers again
  (companions/llm/health.py): a notice above the box says why and what to do (ui/chat/model_notice.py). While the
  model is down, a message the user sends waits in the box, and goes by itself once the model is back.

What is shown is kept by the Qt-free transcript (companions/conversation/transcript.py): this panel feeds it the bus
items and draws the changes it answers. The bus is followed losslessly (``BusFollower(lossless=True)``): under any
load every line reaches the chat.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from typing import Final

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.conversations.active import ActiveConversationChanged
from companions.common.tasks import TaskSet
from companions.conversation.readmodel import ConversationChanged
from companions.conversation.speaking_first import TYPING_EVERY_S, UserTyping
from companions.conversation.transcript import (
    Change,
    ComposingDropped,
    ComposingShown,
    ComposingText,
    LineShown,
    SpeakingShown,
    Transcript,
)
from companions.devices.ports import CameraLooked
from companions.devices.presence import PresenceNoticed
from companions.devices.shown_look import split_look
from companions.llm.health import ModelBack, ModelHealth, ModelTrouble, model_health
from companions.wire.bus import Bus, BusItem
from companions.wire.protocol import Message
from ui.camera.texts import camera_text
from ui.chat.bubble import Header
from ui.chat.input_row import AddressSelector, MessageInput
from ui.chat.model_notice import ModelNotice
from ui.chat.texts import chat_text, emotion_label, message_note
from ui.chat.transcript import ChatTranscript
from ui.roster.colors import companion_color, user_color
from ui.roster.display_names import DisplayNames
from ui.window.bus_bridge import BusFollower
from ui.window.i18n import is_language_change
from ui.window.naming import named
from ui.window.panel_ports import ConversationHistory, People

log = logging.getLogger(__name__)

HISTORY_LIMIT: Final = 1000  # the newest messages shown when a conversation opens; search finds the older ones
HISTORY_CHUNK: Final = 10  # messages laid out per event-loop turn while a history opens (a few ms each)


class ChatPanel(QWidget):
    """The chat view: the bus it follows, the conversations' history (and sending), who is who. Call :meth:`attach`
    once the runtime started, :meth:`detach` before it stops.
    """

    message_shown = Signal(str)  # a final message's id, once its bubble is shown
    history_loaded = Signal(int)  # the conversation id, once its stored messages are shown
    send_failed = Signal(str)  # the reason; the text stays in the box
    composing_changed = Signal(str)  # a provisional bubble's key: created, grown, relabelled or removed
    speaking_changed = Signal(str, bool)  # a message id, and whether it is highlighted as being spoken now
    looked = Signal(object)  # a CameraLooked or PresenceNoticed, in the conversation's order (ui/chat/looks.py)
    message_waiting = Signal(bool)  # a message waits in the box for the model (True), or no longer does (False)

    def __init__(self, bus: Bus, history: ConversationHistory, people: People, parent: QWidget | None = None, *,
                 health: ModelHealth = model_health) -> None:
        super().__init__(parent)
        self.history, self.people = history, people
        self._bus = bus
        self._health = health
        self._typed_at = 0.0  # when the window last said the user types (UserTyping)
        self.names = DisplayNames(people)
        self.view = named(ChatTranscript(), "chatView")
        self.address = named(AddressSelector(), "addressButton")
        self.input = named(MessageInput(), "chatInput")
        self.input.setPlaceholderText(chat_text("placeholder"))
        self.input.setToolTip(chat_text("input.tooltip"))
        self.input.setFixedHeight(72)
        self.input.setTabChangesFocus(True)  # keyboard-only use: Tab leaves the box
        self.send_button = named(QPushButton(chat_text("send")), "sendButton")
        self.error = named(QLabel(), "chatError")
        self.error.setWordWrap(True)
        self.error.setProperty("result", "error")
        self.error.hide()
        self.model_notice = named(ModelNotice(), "modelNotice")  # the model does not answer: why, what to do
        self._held = False  # a message waits in the box for the model
        self.send_button.clicked.connect(self.submit)
        self.input.submit_requested.connect(self.submit)
        self.input.textChanged.connect(self._on_typing)
        row = self.input_row = QHBoxLayout()  # others may add buttons here (ui/chat/show_them.py)
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.address, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.model_notice)
        layout.addWidget(self.error)
        layout.addLayout(row)
        self.address.menu_.aboutToShow.connect(self._refresh_addressees)  # who is present right now
        self._bus_link = BusFollower(bus, ("messages", "events"), lossless=True)  # never loses a line
        self._tasks = TaskSet("chat-view")  # a failure is logged there
        self._generation = 0
        self._loading = False
        self._pending: list[BusItem] = []
        self.transcript = Transcript(self.people.user_id)  # what is shown (companions/conversation/transcript.py)

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def attach(self) -> None:
        """Follows the bus and shows the active conversation's stored history."""
        self._refresh_addressees()
        for trouble in self._health.troubles:  # found before the window followed the bus
            self.model_notice.follow(trouble)
        self._loading = True  # what arrives while the history loads is shown after it
        self._bus_link.follow(self, self._on_item)
        await self._load(self.history.active_id())

    def detach(self) -> None:
        """Stops following the bus (call before the runtime stops or the widget goes)."""
        self._bus_link.stop()
        self._tasks.cancel()

    def changeEvent(self, event: QEvent) -> None:
        """In another language: the box, the button and the bubbles (the conversation is shown again: names,
        feelings and states are words too; the "To" chooser says its own words again)."""
        if is_language_change(event):
            self.input.setPlaceholderText(chat_text("placeholder"))
            self.input.setToolTip(chat_text("input.tooltip"))
            self.send_button.setText(chat_text("send"))
            self._show_again()
        super().changeEvent(event)

    def _show_again(self) -> None:
        if self._bus_link.active:
            self._tasks.spawn(self._load(self.history.active_id()), name="chat-history")

    # -- sending ---------------------------------------------------------------------------------------------
    @property
    def holding(self) -> bool:
        """Whether a message waits in the box for the model to answer again."""
        return self._held

    def submit(self) -> None:
        """Sends the box's text to the chosen companions; the text is cleared only once it was sent. While the
        model is known not to answer, the text waits in the box (the notice says so) and goes once it is back."""
        text = self.input.toPlainText().strip()
        if not text:
            return
        if self.model_notice.down:
            self._hold(True)
            return
        try:
            if self.history.active_id() is None or not self._bus_link.active:  # not started, or stopping
                raise RuntimeError(chat_text("not_started"))
            self.history.send(text, to=self.address.addressees() or None)
        except Exception as err:  # whatever the reason, the user's words stay where they are
            log.warning("sending a message failed: %s", err)
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            self.error.setText(chat_text("send_failed", error=reason))
            self.error.show()
            self.send_failed.emit(reason)
            return
        self.error.hide()
        self.input.clear()
        self._hold(False)

    def _hold(self, held: bool) -> None:
        if held != self._held:
            self._held = held
            self.model_notice.set_waiting(held)
            self.message_waiting.emit(held)

    def _on_typing(self) -> None:
        now = time.time()
        if self.input.toPlainText() and now - self._typed_at >= TYPING_EVERY_S:
            self._typed_at = now
            self._bus.publish(UserTyping(now))  # the companions never speak first over it (speaking_first.py)
        if not self.input.toPlainText():
            if self.error.isVisible():
                self.error.hide()
            self._hold(False)  # nothing left to send

    def _model_changed(self, event: ModelTrouble | ModelBack) -> None:
        self.model_notice.follow(event)
        if self._held and not self.model_notice.down:
            self._hold(False)
            self.submit()  # the message that waited goes now

    def _refresh_addressees(self) -> None:
        present = self.people.present()
        if present:
            self.address.set_companions(list(present))

    # -- showing ---------------------------------------------------------------------------------------------
    def show_stored(self, message: Message, *, when: float | None = None, edited: bool = False) -> None:
        """Shows a stored message (once per id); its note says whether the user ``edited`` it, or why a stock filler
        stood in."""
        line = self.transcript.stored(message)
        if line is not None:
            self._show_line(line, when=when, edited=edited)

    def _show_line(self, line: LineShown, *, when: float | None = None, edited: bool = False) -> None:
        """Shows a final message, replacing what its sender was composing."""
        message = line.message
        p = message.params
        user = self._is_user(p.from_)
        emotion = p.metadata.emotion if p.metadata is not None else None
        header = Header(
            name=self._name(p.from_), color=self._color(p.from_), avatar="" if user else p.from_,
            emotion=emotion_label(emotion) if emotion else "",
            recipients=self._recipients(p.from_, p.to),
            time=datetime.datetime.fromtimestamp(when).strftime("%H:%M") if when is not None
            else datetime.datetime.now().strftime("%H:%M"),
            note=message_note(message, edited=edited),
        )
        dropped: list[str] = []
        batch = self.view.batch()
        batch.beginEditBlock()  # the streamed bubble goes and the message takes its place in one layout pass
        try:
            for key in line.replaced:
                if self._drop(key, announce=False):
                    dropped.append(key)
            # The user's own words; what the camera saw folds away under them.
            self.view.add_bubble(p.id, header, line.words, user=user)
            if line.look:
                self.view.set_fold(p.id, camera_text("chat.fold"), line.look)
        finally:
            batch.endEditBlock()
        for key in dropped:
            self.composing_changed.emit(key)
        self.message_shown.emit(p.id)

    def message_text(self, message_id: str) -> str:
        """The text of a message as it was said (with what the camera saw, which its bubble folds away)."""
        words = self.view.body_text(message_id)
        look = self.transcript.looks.get(message_id)
        return f"{words}\n{look}" if look else words

    def show_revised(self, message_id: str, text: str) -> None:
        """The user edited a message: its bubble shows the new text (what the camera saw still folded, if the text
        still ends with it)."""
        words, look = split_look(text, self.transcript.looks.get(message_id))
        self.view.set_text(message_id, words)
        self.transcript.revised(message_id, look)
        if look:
            self.view.set_fold(message_id, camera_text("chat.fold"), look)

    @property
    def message_count(self) -> int:
        return len(self.transcript.shown)

    def speaking_message(self, companion_id: str) -> str | None:
        """The id of the message highlighted as ``companion_id``'s speech, if any."""
        return self.transcript.speaking.get(companion_id)

    # -- the bus ---------------------------------------------------------------------------------------------
    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, ModelTrouble | ModelBack):
            self._model_changed(item)
            return
        if isinstance(item, ActiveConversationChanged):
            self._loading = True
            self._pending.clear()
            self._tasks.spawn(self._load(item.conversation_id), name="chat-history")
            return
        if self._loading:
            self._pending.append(item)
            return
        self._apply(item)

    def _apply(self, item: BusItem) -> None:
        if isinstance(item, ConversationChanged) and item.change in ("joined", "left"):
            self._refresh_addressees()  # e.g. a companion from the network or the bridge
        elif isinstance(item, CameraLooked | PresenceNoticed):
            self.looked.emit(item)
        for change in self.transcript.apply(item):
            self._draw(change)

    def _draw(self, change: Change) -> None:
        if isinstance(change, LineShown):
            self._show_line(change)
        elif isinstance(change, ComposingShown):
            self._provisional(change)
        elif isinstance(change, ComposingText):
            if change.replace:
                self.view.set_text(change.key, change.text)
            else:
                self.view.append_text(change.key, change.text)
            self.composing_changed.emit(change.key)
        elif isinstance(change, ComposingDropped):
            self._drop(change.key)
        elif isinstance(change, SpeakingShown):
            self._on_speaking(change)

    async def _load(self, conversation_id: int | None) -> None:
        self._generation += 1
        generation = self._generation
        self._loading = True
        stored = [] if conversation_id is None else await self.history.messages(conversation_id, limit=HISTORY_LIMIT)
        if generation != self._generation:
            return  # another conversation was chosen meanwhile
        self.transcript.reset()
        self.view.clear_bubbles(chat_text("earlier") if len(stored) >= HISTORY_LIMIT else "")
        batch = self.view.batch()
        for start in range(0, len(stored), HISTORY_CHUNK):
            batch.beginEditBlock()  # one layout pass per chunk
            try:
                for entry in stored[start:start + HISTORY_CHUNK]:
                    self.show_stored(entry.message, when=entry.created_at, edited=entry.edited_at is not None)
            finally:
                batch.endEditBlock()
            self.view.scroll_to_newest()
            await asyncio.sleep(0)  # a long history never holds the loop (and the companions) for long
            if generation != self._generation:
                return
        self._loading = False
        pending, self._pending = self._pending, []
        for item in pending:
            self._apply(item)
        self._refresh_addressees()
        if conversation_id is not None:
            self.history_loaded.emit(conversation_id)

    # -- what companions compose ------------------------------------------------------------------------------
    def _provisional(self, change: ComposingShown) -> None:
        header = Header(name=self._name(change.companion), color=self._color(change.companion),
                        avatar=change.companion, status=chat_text(change.status))
        if change.new:
            self.view.add_provisional(change.key, header)
        else:
            self.view.set_header(change.key, header)
        self.composing_changed.emit(change.key)

    def _drop(self, key: str, *, announce: bool = True) -> bool:
        """Removes a composing bubble; True if one was shown (``composing_changed`` fires if ``announce``)."""
        if not self.view.has(key):
            return False
        self.view.remove(key)
        if announce:
            self.composing_changed.emit(key)
        return True

    # -- speech ----------------------------------------------------------------------------------------------
    def _on_speaking(self, change: SpeakingShown) -> None:
        if change.speaking:
            status = f"♪ {chat_text('speaking')}"
            if self.view.set_highlighted(change.message_id, True, status):
                self.speaking_changed.emit(change.message_id, True)
            else:
                self.transcript.speaking.pop(change.companion, None)
        else:
            self.view.set_highlighted(change.message_id, False)
            self.speaking_changed.emit(change.message_id, False)

    # -- helpers ---------------------------------------------------------------------------------------------
    def _is_user(self, sender: str) -> bool:
        return sender == self.people.user_id()

    def _name(self, sender: str) -> str:
        return self.names.of(sender)

    def _color(self, sender: str) -> QColor:
        return user_color() if self._is_user(sender) else companion_color(sender)

    def _recipients(self, sender: str, to: list[str]) -> str:
        """The addressees worth showing: none when a message goes to everyone present."""
        if not to:
            return ""
        everyone = {*self.people.companion_ids(), self.people.user_id()}
        everyone.discard(sender)
        if everyone and everyone <= set(to):
            return ""
        return ", ".join(self._name(t) for t in to)
