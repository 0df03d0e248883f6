"""The status bar while the companions' language model does not answer: it says so, and never "Ready".

:class:`ModelStatus` is a permanent status bar widget that follows the model health on the bus
(:class:`~companions.llm.health.ModelTrouble`, :class:`~companions.llm.health.ModelBack`). While a model is down
(unreachable, gone, too slow) it shows "Language model not answering" (the backend's words in its tooltip), and the
status bar's passing message "Ready" is taken away, now and whenever it is shown again meanwhile; the chat's notice
(ui/chat/model_notice.py) says why and what to do. Once every model answers again it hides.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from companions.llm.health import ModelBack, ModelHealth, ModelTrouble, model_health
from companions.wire.bus import Bus, BusItem
from ui.window.bus_bridge import BusFollower
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts, is_language_change, translate, window_language
from ui.window.naming import named

TEXTS: Final = Texts("model_status", {
    "down": QT_TRANSLATE_NOOP("model_status", "Language model not answering"),
})
READY: Final = ("main_window", "Ready")
"""The status bar's passing message at the start (ui/window/main_window.py), in its translation context."""


class ModelStatus(QLabel):
    """Follows ``bus`` from :meth:`attach` to :meth:`detach`; shown in ``status_bar`` while a model is down."""

    def __init__(self, bus: Bus, status_bar: QStatusBar, parent: QWidget | None = None, *,
                 health: ModelHealth = model_health) -> None:
        super().__init__(parent)
        named(self, "modelStatus")
        self.setProperty("result", "error")
        self._status_bar = status_bar
        self._health = health
        self._troubles: dict[str, ModelTrouble] = {}
        self._bus_link = BusFollower(bus, ("events",))
        self.setText(TEXTS.text("down"))
        self.hide()
        status_bar.messageChanged.connect(self._message_shown)

    @property
    def down(self) -> bool:
        """Whether a model is known not to answer at all."""
        return any(t.down for t in self._troubles.values())

    def attach(self) -> None:
        for trouble in self._health.troubles:  # found before the window followed the bus
            self._follow(trouble)
        self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        self._bus_link.stop()

    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, ModelTrouble | ModelBack):
            self._follow(item)

    def _follow(self, event: ModelTrouble | ModelBack) -> None:
        self._troubles.pop(event.endpoint, None)
        if isinstance(event, ModelTrouble):
            self._troubles[event.endpoint] = event
        down = [t for t in self._troubles.values() if t.down]
        self.setVisible(bool(down))
        if down:
            self.setToolTip(down[-1].detail)
            self._message_shown(self._status_bar.currentMessage())

    def _message_shown(self, message: str) -> None:
        if self.down and message and message == translate(*READY, window_language()):
            self._status_bar.clearMessage()  # the companions are not ready: the permanent widget says why

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self.setText(TEXTS.text("down"))
        super().changeEvent(event)
