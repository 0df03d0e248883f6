"""Says in the window, once per origin, that a web page tried to use the bridge and was refused.

The bridge refuses a browser's handshake whose ``Origin`` is not allowed (app/bridge/origins.py) and publishes
:class:`~app.bridge.origins.BridgeOriginRefused` the first time; without this the user would only find it in the
log, and could not tell why the avatar page they just opened does not connect (or that some site tried).
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QObject

from app.bridge.origins import BridgeOriginRefused
from companions.bus import Bus, BusItem
from ui.bus_bridge import BusFollower
from ui.i18n import QT_TRANSLATE_NOOP, Texts
from ui.notifications import NotificationArea

_TEXTS: Final = Texts("refused_origins", {
    "title": QT_TRANSLATE_NOOP("refused_origins", "A web page was refused"),
    "text": QT_TRANSLATE_NOOP(
        "refused_origins", "A page from {origin} tried to connect to Madoi. If it is yours, allow it in Settings, "
        "Bridge tab, \"Web pages allowed\"."),
})
_SHOWN_CAP: Final = 256


class RefusedOrigins(QObject):
    """Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    def __init__(self, bus: Bus, notifications: NotificationArea, language: str) -> None:
        super().__init__(notifications)
        self.notifications = notifications
        self.language = language
        self.shown: set[str] = set()
        self._bus_link = BusFollower(bus, ("events",))

    def attach(self) -> None:
        self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        self._bus_link.stop()

    def _on_item(self, item: BusItem) -> None:
        if not isinstance(item, BridgeOriginRefused) or item.origin in self.shown or len(self.shown) >= _SHOWN_CAP:
            return
        self.shown.add(item.origin)
        self.notifications.notify(_TEXTS.text("title", self.language),
                                  _TEXTS.text("text", self.language).format(origin=item.origin or "?"), "warning")
