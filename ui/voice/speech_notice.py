"""A lasting notice in the status bar while the companions' speech is off, and why (no audio device, turned off).

The speaker reports it once, at start or at the first line it cannot say (``DeviceStatus`` on the ``events`` topic);
without this the only trace was a line in the log, and a user waited for voices that never came.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from companions.devices.ports import DeviceStatus
from companions.wire.bus import Bus, BusItem
from ui.settings.texts import speech_reason_text
from ui.window.attached import AttachedWidget
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

_TEXTS: Final = Texts("speech_notice", {
    "off": QT_TRANSLATE_NOOP("speech_notice", "Speech is off"),
    "tooltip": QT_TRANSLATE_NOOP("speech_notice", "The companions' lines are shown but not spoken: {reason}"),
})


class SpeechNotice(AttachedWidget, QLabel):
    """Hidden while speech works; call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    def __init__(self, bus: Bus, status: Callable[[], DeviceStatus | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "speechNotice")
        self.speaker_status = status
        self.reason = ""
        self.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.follow_bus(bus, ("events",))
        self.hide()

    def on_attach(self) -> None:
        status = self.speaker_status()
        if status is not None:
            self._show(status)

    def retranslate(self) -> None:
        self._render()

    def on_item(self, item: BusItem) -> None:
        if isinstance(item, DeviceStatus) and item.device == "speaker":
            self._show(item)

    def _show(self, status: DeviceStatus) -> None:
        self.reason = "" if status.available else (status.reason or "?")
        self._render()

    def _t(self, key: str) -> str:
        return _TEXTS.text(key)

    def _render(self) -> None:
        self.setText(self._t("off"))
        reason = speech_reason_text(self.reason)
        self.setToolTip(self._t("tooltip").format(reason=reason))
        self.setAccessibleName(self.toolTip())
        self.setVisible(bool(self.reason))
