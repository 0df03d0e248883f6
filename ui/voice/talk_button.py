"""Push-to-talk: a button beside Send held while speaking, and a key held anywhere in the window (F8 unless set).

Pressing starts an utterance at once (with the pre-roll before the press) and cuts the companions off; releasing
ends it (``VoiceInput.press`` / ``release``). It works in either mode; in push-to-talk mode it is the only way in.
The button is enabled while the microphone is open and says why not otherwise.
"""

from __future__ import annotations

from typing import Final, Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QIcon, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QToolButton

from companions.voice_input.events import MicrophoneChanged, MicrophoneState
from companions.wire.bus import Bus, BusItem
from ui.chat.panel import ChatPanel
from ui.voice.microphone_switch import microphone_icon
from ui.window.attached import AttachedWidget
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

_TEXTS: Final = Texts("talk_button", {
    "tooltip": QT_TRANSLATE_NOOP("talk_button", "Hold to talk (or hold {shortcut}): the companions stop and "
                                 "listen, and what you say is sent when you let go."),
    "tooltip.off": QT_TRANSLATE_NOOP("talk_button", "Turn the microphone on in the status bar to talk."),
    "accessible": QT_TRANSLATE_NOOP("talk_button", "Hold to talk"),
})


class TalkPort(Protocol):
    """``app.voice_input.controls.RuntimeVoiceInput`` is one."""

    def state(self) -> tuple[MicrophoneState, str]: ...

    def push_to_talk_key(self) -> str: ...

    def press(self) -> None: ...

    def release(self) -> None: ...


class TalkButton(AttachedWidget, QToolButton):
    """Put beside the chat's Send button (:meth:`place`); call :meth:`attach` / :meth:`detach`."""

    def __init__(self, chat: ChatPanel, bus: Bus, port: TalkPort) -> None:
        super().__init__()
        named(self, "talkButton")
        self.chat = chat
        self.port = port
        self.setIcon(QIcon(microphone_icon(18, self.palette().buttonText().color())))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.pressed.connect(port.press)
        self.released.connect(port.release)
        self.follow_bus(bus, ("events",))
        self.key = PushToTalkKey(port)
        self._state: MicrophoneState = "off"
        self._render()

    def place(self) -> None:
        layout = self.chat.input_row
        index = layout.indexOf(self.chat.send_button)
        layout.insertWidget(index if index >= 0 else layout.count(), self)

    def on_attach(self) -> None:
        self._state = self.port.state()[0]
        self.key.install(self.port.push_to_talk_key())
        self._render()

    def on_detach(self) -> None:
        self.key.remove()

    def retranslate(self) -> None:
        self._render()

    def follow_settings(self) -> None:
        """The key may have changed in the settings."""
        self.key.install(self.port.push_to_talk_key())
        self._render()

    def on_item(self, item: BusItem) -> None:
        if isinstance(item, MicrophoneChanged):
            self._state = item.state
            self._render()

    def _render(self) -> None:
        usable = self._state in ("listening", "hearing", "recognising")
        self.setEnabled(usable or self.isDown())
        key = self.port.push_to_talk_key()
        tip = _TEXTS.text("tooltip", shortcut=key) if usable \
            else _TEXTS.text("tooltip.off")
        self.setToolTip(tip)
        self.setAccessibleName(_TEXTS.text("accessible"))
        self.setAccessibleDescription(tip)


class PushToTalkKey(QObject):
    """Watches the whole application for the push-to-talk key held down (auto-repeat ignored)."""

    def __init__(self, port: TalkPort) -> None:
        super().__init__()
        self.port = port
        self.key: int | None = None
        self.held = False

    def install(self, key: str) -> None:
        sequence = QKeySequence(key)
        self.key = sequence[0].key().value if not sequence.isEmpty() else None  # type: ignore[index]
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
            if self.key is not None:
                app.installEventFilter(self)

    def remove(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        if self.held:
            self.held = False
            self.port.release()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and isinstance(event, QKeyEvent) \
                and event.key() == self.key:
            if not event.isAutoRepeat():
                down = kind == QEvent.Type.KeyPress
                if down and not self.held:
                    self.held = True
                    self.port.press()
                elif not down and self.held:
                    self.held = False
                    self.port.release()
            return True  # the key is the microphone's: it types nothing
        return False
