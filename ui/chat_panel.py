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
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.conversations import ActiveConversationChanged
from companions.bus import Bus, BusItem
from companions.conversation.readmodel import ConversationChanged
from companions.devices import CameraLooked, SpeakingChanged
from companions.protocol import Message
from companions.shown_look import shown_parts, split_look
from companions.tasks import TaskSet
from companions.worker import TextStreamed, TurnEnded
from ui.bus_bridge import BusFollower
from ui.camera_texts import camera_text
from ui.chat_bubble import Header
from ui.chat_input import AddressSelector, MessageInput
from ui.chat_texts import chat_text, emotion_label, message_note
from ui.chat_transcript import ChatTranscript
from ui.companion_colors import companion_color, user_color
from ui.naming import named
from ui.ports import ConversationHistory, People

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
    looked = Signal(object)  # a CameraLooked, in the conversation's order (ui/chat_looks.py shows it)

    def __init__(self, bus: Bus, history: ConversationHistory, people: People, language: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history, self.people = history, people
        self.language = language
        self.view = named(ChatTranscript(), "chatView")
        self.address = named(AddressSelector(language), "addressButton")
        self.input = named(MessageInput(), "chatInput")
        self.input.setPlaceholderText(chat_text("placeholder", language))
        self.input.setToolTip(chat_text("input.tooltip", language))
        self.input.setFixedHeight(72)
        self.input.setTabChangesFocus(True)  # keyboard-only use: Tab leaves the box
        self.send_button = named(QPushButton(chat_text("send", language)), "sendButton")
        self.error = named(QLabel(), "chatError")
        self.error.setWordWrap(True)
        self.error.setProperty("result", "error")
        self.error.hide()
        self.send_button.clicked.connect(self.submit)
        self.input.submit_requested.connect(self.submit)
        self.input.textChanged.connect(self._on_typing)
        row = self.input_row = QHBoxLayout()  # others may add buttons here (ui/show_them.py)
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.address, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.error)
        layout.addLayout(row)
        self.address.menu_.aboutToShow.connect(self._refresh_addressees)  # who is present right now
        self._bus_link = BusFollower(bus, ("messages", "events"))
        self._tasks = TaskSet("chat-view")  # a failure is logged there
        self._generation = 0
        self._loading = False
        self._pending: list[BusItem] = []
        self._shown: set[str] = set()
        self._looks: dict[str, str] = {}  # message id -> what the camera saw at its end (folded in its bubble)
        self._streams: dict[str, tuple[str, str]] = {}  # provisional key -> (companion, turn)
        self._status: dict[str, str] = {}  # provisional key -> "composing" | "waiting"
        self._breaks: set[str] = set()  # provisional keys whose model request ended (next text: new paragraph)
        self._lines: dict[str, bool] = {}  # provisional key -> a line (speech) shows; True while it still grows
        self._replaced: set[tuple[str, str]] = set()  # (companion, turn) whose message was published
        self._unspoken: dict[str, str] = {}  # companion -> its latest message not voiced yet
        self._speaking: dict[str, str] = {}  # companion -> the message highlighted while it speaks
        self._current_turn: tuple[str | None, str] | None = None  # (speaker, turn) composing or waiting

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def attach(self) -> None:
        """Follows the bus and shows the active conversation's stored history."""
        self._refresh_addressees()
        self._loading = True  # what arrives while the history loads is shown after it
        self._bus_link.follow(self, self._on_item)
        await self._load(self.history.active_id())

    def detach(self) -> None:
        """Stops following the bus (call before the runtime stops or the widget goes)."""
        self._bus_link.stop()
        self._tasks.cancel()

    def set_language(self, language: str) -> None:
        """Says everything in ``language`` from now on: the box, the button, the "To" chooser, and the bubbles (the
        conversation is shown again: names, feelings and states are words too)."""
        self.language = language
        self.input.setPlaceholderText(chat_text("placeholder", language))
        self.input.setToolTip(chat_text("input.tooltip", language))
        self.send_button.setText(chat_text("send", language))
        self.address.set_language(language)
        if self._bus_link.active:
            self._tasks.spawn(self._load(self.history.active_id()), name="chat-history")

    # -- sending ---------------------------------------------------------------------------------------------
    def submit(self) -> None:
        """Sends the box's text to the chosen companions; the text is cleared only once it was sent."""
        text = self.input.toPlainText().strip()
        if not text:
            return
        try:
            if self.history.active_id() is None or not self._bus_link.active:  # not started, or stopping
                raise RuntimeError(chat_text("not_started", self.language))
            self.history.send(text, to=self.address.addressees() or None)
        except Exception as err:  # whatever the reason, the user's words stay where they are
            log.warning("sending a message failed: %s", err)
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            self.error.setText(chat_text("send_failed", self.language, error=reason))
            self.error.show()
            self.send_failed.emit(reason)
            return
        self.error.hide()
        self.input.clear()

    def _on_typing(self) -> None:
        if self.error.isVisible() and not self.input.toPlainText():
            self.error.hide()

    def _refresh_addressees(self) -> None:
        present = self.people.present()
        if present:
            self.address.set_companions(list(present))

    # -- showing ---------------------------------------------------------------------------------------------
    def add_message(self, message: Message, *, when: float | None = None, edited: bool = False) -> None:
        """Shows a final message (once per id), replacing what its sender was composing; its note says whether the
        user ``edited`` it, or why a stock filler stood in."""
        p = message.params
        if p.id in self._shown:
            return
        self._shown.add(p.id)
        user = self._is_user(p.from_)
        emotion = p.metadata.emotion if p.metadata is not None else None
        header = Header(
            name=self._name(p.from_), color=self._color(p.from_), avatar="" if user else p.from_,
            emotion=emotion_label(emotion, self.language) if emotion else "",
            recipients=self._recipients(p.from_, p.to),
            time=datetime.datetime.fromtimestamp(when).strftime("%H:%M") if when is not None
            else datetime.datetime.now().strftime("%H:%M"),
            note=message_note(message, self.language, edited=edited),
        )
        words, look = shown_parts(message)  # the user's own words; what the camera saw folds away under them
        dropped: list[str] = []
        batch = self.view.batch()
        batch.beginEditBlock()  # the streamed bubble goes and the message takes its place in one layout pass
        try:
            if not user:
                for key in self._provisional_of(p.from_):
                    self._replaced.add(self._streams[key])
                    if self._drop(key, announce=False):
                        dropped.append(key)
                self._unspoken[p.from_] = p.id
            self.view.add_bubble(p.id, header, words, user=user)
            if look:
                self._looks[p.id] = look
                self.view.set_fold(p.id, camera_text("chat.fold", self.language), look)
        finally:
            batch.endEditBlock()
        for key in dropped:
            self.composing_changed.emit(key)
        self.message_shown.emit(p.id)

    def message_text(self, message_id: str) -> str:
        """The text of a message as it was said (with what the camera saw, which its bubble folds away)."""
        words = self.view.body_text(message_id)
        look = self._looks.get(message_id)
        return f"{words}\n{look}" if look else words

    def show_revised(self, message_id: str, text: str) -> None:
        """The user edited a message: its bubble shows the new text (what the camera saw still folded, if the text
        still ends with it)."""
        words, look = split_look(text, self._looks.get(message_id))
        self.view.set_text(message_id, words)
        if look:
            self.view.set_fold(message_id, camera_text("chat.fold", self.language), look)
        else:
            self._looks.pop(message_id, None)

    def clear_messages(self) -> None:
        self._shown.clear()
        self._reset_tracking()
        self.view.clear_bubbles()

    @property
    def message_count(self) -> int:
        return len(self._shown)

    def speaking_message(self, companion_id: str) -> str | None:
        """The id of the message highlighted as ``companion_id``'s speech, if any."""
        return self._speaking.get(companion_id)

    # -- the bus ---------------------------------------------------------------------------------------------
    def _on_item(self, item: BusItem) -> None:
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
        if isinstance(item, Message):
            self.add_message(item)
        elif isinstance(item, TextStreamed):
            self._on_streamed(item)
        elif isinstance(item, TurnEnded):
            self._on_turn_ended(item)
        elif isinstance(item, ConversationChanged):
            if item.change in ("joined", "left"):  # e.g. a companion from the network or the bridge
                self._refresh_addressees()
            self._on_conversation(item)
        elif isinstance(item, SpeakingChanged):
            self._on_speaking(item)
        elif isinstance(item, CameraLooked):
            self.looked.emit(item)

    async def _load(self, conversation_id: int | None) -> None:
        self._generation += 1
        generation = self._generation
        self._loading = True
        stored = [] if conversation_id is None else await self.history.messages(conversation_id, limit=HISTORY_LIMIT)
        if generation != self._generation:
            return  # another conversation was chosen meanwhile
        self._shown.clear()
        self._reset_tracking()
        self.view.clear_bubbles(chat_text("earlier", self.language) if len(stored) >= HISTORY_LIMIT else "")
        batch = self.view.batch()
        for start in range(0, len(stored), HISTORY_CHUNK):
            batch.beginEditBlock()  # one layout pass per chunk
            try:
                for entry in stored[start:start + HISTORY_CHUNK]:
                    self.add_message(entry.message, when=entry.created_at, edited=entry.edited_at is not None)
            finally:
                batch.endEditBlock()
            self.view.scroll_to_newest()
            await asyncio.sleep(0)  # a long history never holds the loop (and the companions) for long
            if generation != self._generation:
                return
        self._unspoken.clear()  # stored messages were spoken (or not) long ago: never light them up
        self._loading = False
        pending, self._pending = self._pending, []
        for item in pending:
            self._apply(item)
        self._refresh_addressees()
        if conversation_id is not None:
            self.history_loaded.emit(conversation_id)

    # -- what companions compose ------------------------------------------------------------------------------
    def _on_conversation(self, event: ConversationChanged) -> None:
        turn = event.view.turn
        if turn is None:
            return
        if turn.phase in ("composing", "waiting") and turn.speaker is not None \
                and (turn.speaker, turn.turn_id) not in self._replaced:  # (the view lags behind the message)
            for key, (companion, turn_id) in list(self._streams.items()):
                if turn_id == turn.turn_id and companion != turn.speaker:  # the floor passed on: given up
                    self._drop(key)
            status = "composing" if turn.phase == "composing" else "waiting"
            self._provisional(turn.speaker, turn.turn_id, status)
        elif turn.phase in ("cancelled", "ended"):
            for key, (_companion, turn_id) in list(self._streams.items()):
                if turn_id == turn.turn_id:
                    self._drop(key)
        self._current_turn = (turn.speaker, turn.turn_id) if turn.phase in ("composing", "waiting") else None

    def _on_streamed(self, event: TextStreamed) -> None:
        stream = (event.companion_id, event.turn_id)
        if stream in self._replaced:
            return  # said already: more text in this turn is never spoken
        key = self._provisional(event.companion_id, event.turn_id, "composing")
        if event.done:
            self._breaks.add(key)
            if self._lines.get(key):
                self._lines[key] = False  # the next line of this turn starts afresh
            return
        if not event.text:
            return
        if event.kind == "speech":
            if not self._lines.get(key):  # a new line: what the bubble showed is not what will be said
                self._lines[key] = True
                self._breaks.discard(key)
                self.view.set_text(key, event.text)
            else:
                self.view.append_text(key, event.text)
            self.composing_changed.emit(key)
            return
        if key in self._lines:
            return  # plain text after the line is not said
        text = event.text
        if key in self._breaks:  # the next request of the same turn: a new paragraph
            self._breaks.discard(key)
            text = "\n" + text
        self.view.append_text(key, text)
        self.composing_changed.emit(key)

    def _on_turn_ended(self, event: TurnEnded) -> None:
        key = self._stream_key(event.companion_id, event.turn_id)
        if key not in self._streams:
            return
        if event.status == "finished" and self._current_turn == (event.companion_id, event.turn_id):
            self._provisional(event.companion_id, event.turn_id, "waiting")  # conversation control delivers it
        else:
            self._drop(key)  # cancelled, failed, or nobody will deliver it: it was never said

    def _provisional(self, companion_id: str, turn_id: str, status: str) -> str:
        key = self._stream_key(companion_id, turn_id)
        if key in self._streams and self._status.get(key) == status:
            return key  # every streamed piece and most views: nothing to change
        header = Header(name=self._name(companion_id), color=self._color(companion_id), avatar=companion_id,
                        status=chat_text(status, self.language))
        if key not in self._streams:
            self._streams[key] = (companion_id, turn_id)
            self.view.add_provisional(key, header)
            self._status[key] = status
            self.composing_changed.emit(key)
        else:
            self._status[key] = status
            self.view.set_header(key, header)
            self.composing_changed.emit(key)
        return key

    def _drop(self, key: str, *, announce: bool = True) -> bool:
        """Forgets a provisional bubble; True if one was shown (``composing_changed`` fires if ``announce``)."""
        self._streams.pop(key, None)
        self._status.pop(key, None)
        self._breaks.discard(key)
        self._lines.pop(key, None)
        if not self.view.has(key):
            return False
        self.view.remove(key)
        if announce:
            self.composing_changed.emit(key)
        return True

    def _provisional_of(self, companion_id: str) -> list[str]:
        return [key for key, (companion, _turn) in self._streams.items() if companion == companion_id]

    @staticmethod
    def _stream_key(companion_id: str, turn_id: str) -> str:
        return f"~{companion_id}:{turn_id}"

    # -- speech ----------------------------------------------------------------------------------------------
    def _on_speaking(self, event: SpeakingChanged) -> None:
        companion = event.speaker_id
        if event.speaking:
            message_id = self._unspoken.pop(companion, None)
            status = f"♪ {chat_text('speaking', self.language)}"
            if message_id is not None and self.view.set_highlighted(message_id, True, status):
                self._speaking[companion] = message_id
                self.speaking_changed.emit(message_id, True)
        else:
            message_id = self._speaking.pop(companion, None)
            if message_id is not None:
                self.view.set_highlighted(message_id, False)
                self.speaking_changed.emit(message_id, False)

    # -- helpers ---------------------------------------------------------------------------------------------
    def _reset_tracking(self) -> None:
        self._looks.clear()
        self._streams.clear()
        self._status.clear()
        self._breaks.clear()
        self._lines.clear()
        self._replaced.clear()
        self._unspoken.clear()
        self._speaking.clear()
        self._current_turn = None

    def _is_user(self, sender: str) -> bool:
        return sender == self.people.user_id()

    def _name(self, sender: str) -> str:
        if self._is_user(sender):
            return chat_text("you", self.language)
        return self.people.name(sender, self.language) or sender

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
