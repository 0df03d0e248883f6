"""What the user says appears in the message box as they speak, and goes out from there.

Partial results (``SpeechHeard``, ``final=False``) are shown in the box after whatever the user had typed; at the
end of the utterance the voice input sends the words through this box (:meth:`SpokenWords.send`: it is the voice
input's sender while the window is attached), so they go to the companions chosen in "To", like typed words; with
"send at once" off, or when the recognizer is not sure of them, the final words stay in the box to be edited and
sent with Enter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QTextCursor

from companions.voice_input.events import SpeechHeard
from companions.wire.bus import Bus, BusItem
from ui.chat.panel import ChatPanel
from ui.window.bus_bridge import BusFollower


class VoiceSenderPort(Protocol):
    """Where the window installs its sender (``app.voice_input.controls.RuntimeVoiceInput``)."""

    def use_sender(self, send: Callable[[str], str] | None) -> None: ...


class SpokenWords(QObject):
    """Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    shown = Signal(str)  # the box's text after spoken words were put in it

    def __init__(self, chat: ChatPanel, bus: Bus, port: VoiceSenderPort) -> None:
        super().__init__(chat)
        self.chat = chat
        self.port = port
        self._bus_link = BusFollower(bus, ("events",))
        self._utterance = -1
        self._typed = ""  # what the user had typed when the utterance began

    def attach(self) -> None:
        self._bus_link.follow(self, self._on_item)
        self.port.use_sender(self.send)

    def detach(self) -> None:
        self.port.use_sender(None)
        self._bus_link.stop()

    def send(self, text: str) -> str:
        """The voice input's sender: the words go out from the box as typed ones would (the "To" choice holds).
        Raises with the reason when they could not (they stay in the box)."""
        self._show(text)
        self.chat.submit()
        if self.chat.input.toPlainText().strip():
            raise RuntimeError(self.chat.error.text() or "the message was not sent")
        self._typed = ""
        return ""

    def _on_item(self, item: BusItem) -> None:
        if not isinstance(item, SpeechHeard) or item.sent:
            return
        if item.utterance != self._utterance:
            self._utterance = item.utterance
            self._typed = self.chat.input.toPlainText().rstrip()
        self._show(item.text)

    def _show(self, words: str) -> None:
        text = " ".join(part for part in (self._typed, words.strip()) if part)
        box = self.chat.input
        if box.toPlainText() != text:
            box.setPlainText(text)
            box.moveCursor(QTextCursor.MoveOperation.End)
        self.shown.emit(text)
