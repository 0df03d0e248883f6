"""The status bar's microphone: what it is doing (off / listening / hearing you / recognising / no microphone) and a
one-click mute (Open-LLM-VTuber #370: a game or a video in the room should not talk to the companions).

Clicking applies at once (``app/voice_input/controls.py``); the microphone opens by itself at the next start only
when the user chose that (``[voice_input] keep_on``). The button follows ``MicrophoneChanged``; with no microphone it
says so (the reason in its tooltip), never an error. When the echo guard hears the companions loudly in the
microphone (``EchoAdvice``), it suggests a headset. When the user's words were not understood (a language the
recognizer does not speak: ``SpeechNotUnderstood``) or the recognizer is unsure of them (they wait in the message
box: ``SpeechHeard.unsure``), it says so until the user speaks again, and names the recognizer that would
understand more (``better_recognizer``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, Protocol

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from app.voice_input.controls import RecognizerOffer
from companions.voice_input.events import (
    EchoAdvice,
    MicrophoneChanged,
    MicrophoneState,
    SpeechHeard,
    SpeechNotUnderstood,
)
from companions.wire.bus import Bus, BusItem
from ui.window.device_switch import DeviceSwitch
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts

_TEXTS: Final = Texts("microphone_switch", {
    "off": QT_TRANSLATE_NOOP("microphone_switch", "Microphone off"),
    "listening": QT_TRANSLATE_NOOP("microphone_switch", "Listening"),
    "push": QT_TRANSLATE_NOOP("microphone_switch", "Hold {key} to talk"),
    "hearing": QT_TRANSLATE_NOOP("microphone_switch", "Hearing you…"),
    "recognising": QT_TRANSLATE_NOOP("microphone_switch", "Recognising…"),
    "unavailable": QT_TRANSLATE_NOOP("microphone_switch", "No microphone"),
    "headset": QT_TRANSLATE_NOOP("microphone_switch", "headset?"),
    "foreign": QT_TRANSLATE_NOOP("microphone_switch", "Not understood"),
    "unsure": QT_TRANSLATE_NOOP("microphone_switch", "Not sure: check, then Enter"),
    "tooltip.foreign": QT_TRANSLATE_NOOP(
        "microphone_switch", "What you said could not be made out as {language}, the only language the recogniser in "
        "use understands, so nothing was written or sent."),
    "tooltip.download": QT_TRANSLATE_NOOP(
        "microphone_switch", "To talk in Japanese, download Whisper ({size} MB) in Settings > Voice input."),
    "tooltip.choose": QT_TRANSLATE_NOOP(
        "microphone_switch", "To talk in Japanese, choose Whisper (already downloaded) in Settings > Voice input."),
    "tooltip.unsure": QT_TRANSLATE_NOOP(
        "microphone_switch", "The recogniser was not sure of your words, so they were not sent: they wait in the "
        "message box. Correct them if needed and press Enter to send them."),
    "offer.title": QT_TRANSLATE_NOOP("microphone_switch", "Not understood: nothing was sent"),
    "offer.download": QT_TRANSLATE_NOOP("microphone_switch", "Download Whisper ({size} MB)…"),
    "offer.choose": QT_TRANSLATE_NOOP("microphone_switch", "Choose Whisper…"),
    "language.en": QT_TRANSLATE_NOOP("microphone_switch", "English"),
    "language.ja": QT_TRANSLATE_NOOP("microphone_switch", "Japanese"),
    "tooltip.off": QT_TRANSLATE_NOOP(
        "microphone_switch", "The companions cannot hear you: the microphone is closed. Click to talk to them."),
    "tooltip.on": QT_TRANSLATE_NOOP(
        "microphone_switch", "The companions hear you: speak, and what you say is sent when you stop. Speaking "
        "while they talk cuts them off. Click to mute the microphone."),
    "tooltip.push": QT_TRANSLATE_NOOP(
        "microphone_switch", "Hold {key} (or the microphone button beside Send) while you speak. Click to close "
        "the microphone."),
    "tooltip.unavailable": QT_TRANSLATE_NOOP(
        "microphone_switch", "No microphone could be opened: {reason}. Choose one in Settings > Voice input. "
        "Click to stop trying."),
    "tooltip.headset": QT_TRANSLATE_NOOP(
        "microphone_switch", "The microphone hears the companions' voice almost as loudly as yours: with a headset "
        "(or quieter speakers) your voice can cut them off reliably."),
    "failed": QT_TRANSLATE_NOOP("microphone_switch", "The switch holds for now, but could not be saved: {error}"),
})
Notify = Callable[..., object]  # the window's NotificationArea.notify
ACTIVE_COLOR: Final = "#2e7d32"  # hearing you
OFF_COLOR: Final = "#8a8f98"
WARN_COLOR: Final = "#c62828"


class MicrophoneSwitchPort(Protocol):
    """What the switch needs (``app.voice_input.controls.RuntimeVoiceInput`` is one)."""

    def is_on(self) -> bool: ...

    def state(self) -> tuple[MicrophoneState, str]: ...

    def mode(self) -> str: ...

    def push_to_talk_key(self) -> str: ...

    def headset_advised(self) -> bool: ...

    def better_recognizer(self) -> RecognizerOffer | None: ...

    async def set_on(self, on: bool) -> None: ...


def microphone_icon(size: int, color: QColor, *, crossed: bool = False) -> QPixmap:
    """A small microphone glyph: a capsule on a stand, crossed out when it is off."""
    ratio = 2.0
    pixmap = QPixmap(round(size * ratio), round(size * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(color, max(1.2, size / 12))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.setBrush(color)
        s = size / 16
        painter.drawRoundedRect(QRectF(5.5 * s, 1.5 * s, 5 * s, 8 * s), 2.5 * s, 2.5 * s)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawArc(QRectF(3.5 * s, 4 * s, 9 * s, 8 * s), 180 * 16, 180 * 16)
        painter.drawLine(QPointF(8 * s, 12 * s), QPointF(8 * s, 14.5 * s))
        painter.drawLine(QPointF(5.5 * s, 14.5 * s), QPointF(10.5 * s, 14.5 * s))
        if crossed:
            painter.drawLine(QPointF(2 * s, 2 * s), QPointF(14 * s, 14 * s))
    finally:
        painter.end()
    return pixmap


class MicrophoneSwitch(DeviceSwitch):
    """Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    shown = Signal(str)  # the text shown after the microphone's state (or the headset advice) changed

    def __init__(self, bus: Bus, port: MicrophoneSwitchPort, parent: QWidget | None = None) -> None:
        super().__init__(bus, port, name="microphoneSwitch", device="microphone", parent=parent)
        self.port = port
        self.state: MicrophoneState = "off"
        self.reason = ""
        self.headset = False
        self.notice: Literal["", "foreign", "unsure"] = ""  # about the user's last words, until they speak again
        self.languages: tuple[str, ...] = ()
        self._offer: tuple[Notify, Callable[[str], object]] | None = None
        self.offered = False  # once a run: the tooltip says it every time
        self.setChecked(port.is_on())
        self.refresh()

    def on_attach(self) -> None:
        self.headset = self.port.headset_advised()
        super().on_attach()

    def read_port(self) -> None:
        self.state, self.reason = self.port.state()

    def on_item(self, item: BusItem) -> None:
        if isinstance(item, MicrophoneChanged):
            self.state, self.reason = item.state, item.reason
            if item.state != "listening":  # speaking again (or the microphone closed): the notice has served
                self.notice = ""
            if self.isEnabled():
                self.setChecked(self.port.is_on())
        elif isinstance(item, EchoAdvice):
            self.headset = item.headset
        elif isinstance(item, SpeechNotUnderstood):
            self.notice, self.languages = "foreign", item.languages
            self._offer_better_recognizer()
        elif isinstance(item, SpeechHeard) and item.final:
            self.notice = "unsure" if item.unsure else ""
        else:
            return
        self.refresh()
        self.shown.emit(self.text())

    def _t(self, name: str, **values: object) -> str:
        return _TEXTS.text(name, **values)

    def failed_text(self, error: str) -> str:
        return self._t("failed", error=error)

    def refresh(self) -> None:
        on, state, key = self.isChecked(), self.state, self.port.push_to_talk_key()
        push = self.port.mode() == "push-to-talk"
        if not on:
            text, tip, color = self._t("off"), self._t("tooltip.off"), OFF_COLOR
        elif state == "unavailable":
            text, color = self._t("unavailable"), WARN_COLOR
            tip = self._t("tooltip.unavailable", reason=self.reason)
        elif state in ("hearing", "recognising"):
            text, tip, color = self._t(state), self._t("tooltip.on"), ACTIVE_COLOR
        elif self.notice == "foreign":
            text, tip, color = self._t("foreign"), self._foreign_tip(), WARN_COLOR
        elif self.notice == "unsure":
            text, tip, color = self._t("unsure"), self._t("tooltip.unsure") + self._offer_line(), WARN_COLOR
        else:
            text = self._t("push", key=key) if push else self._t("listening")
            tip = self._t("tooltip.push", key=key) if push else self._t("tooltip.on")
            color = ""
        if on and self.headset:
            text = f"{text} · {self._t('headset')}"
            tip = f"{tip}\n{self._t('tooltip.headset')}"
        glyph = QColor(color) if color else self.palette().buttonText().color()
        self.show_state(text, tip, microphone_icon(16, glyph, crossed=not on or state == "unavailable"))
        self.setStyleSheet(f"QToolButton#microphoneSwitch {{ color: {color}; }}" if color else "")

    def offer_with(self, notify: Notify, open_download: Callable[[str], object]) -> None:
        """Words not understood bring a notification (``notify``: the window's) whose button opens the download of
        the recognizer that understands more (``open_download(choice)``), once a run."""
        self._offer = (notify, open_download)

    def _offer_better_recognizer(self) -> None:
        offer = self.port.better_recognizer()
        if self._offer is None or offer is None or self.offered:
            return
        self.offered = True
        notify, open_download = self._offer
        button = self._t("offer.choose") if offer.downloaded else self._t("offer.download", size=offer.megabytes)
        notify(self._t("offer.title"), self._foreign_tip(), "info", timeout_ms=30_000,
               action=(button, lambda: open_download(offer.choice)))

    def _foreign_tip(self) -> str:
        names = [self._t(f"language.{code}") if code in ("en", "ja") else code for code in self.languages]
        return self._t("tooltip.foreign", language=" / ".join(names) or "?") + self._offer_line()

    def _offer_line(self) -> str:
        """The recognizer that would understand Japanese too, on a line of its own; "" when it is in use."""
        offer = self.port.better_recognizer()
        if offer is None:
            return ""
        return "\n" + (self._t("tooltip.choose") if offer.downloaded else self._t("tooltip.download",
                                                                               size=offer.megabytes))
