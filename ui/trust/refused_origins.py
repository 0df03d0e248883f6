"""Says in the window, once per origin, that a web page tried to use the bridge and was refused; "Allow" lets it in.

The bridge refuses a browser's handshake whose ``Origin`` is not allowed (app/bridge/origins.py) and publishes
:class:`~app.bridge.origins.BridgeOriginRefused` the first time; without this the user would only find it in the
log, and could not tell why the avatar page they just opened does not connect (or that some site tried). The
notification's "Allow" button adds the origin to ``bridge.allowed_origins``, saves the settings and hands them to
the window, which applies them to the running bridge at once (the page connects on its next try); the Bridge tab
of the settings lists and edits the same origins.
"""

from __future__ import annotations

import functools
import logging
from typing import Final, Protocol

from PySide6.QtCore import QObject

from app.bridge.origins import BridgeOriginRefused
from app.settings.model import Settings, SettingsStore
from companions.common.tasks import TaskSet
from companions.wire.bus import Bus, BusItem
from ui.window.bus_bridge import BusFollower
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.notifications import NotificationArea

log = logging.getLogger(__name__)

_TEXTS: Final = Texts("refused_origins", {
    "title": QT_TRANSLATE_NOOP("refused_origins", "A web page was refused"),
    "text": QT_TRANSLATE_NOOP(
        "refused_origins", "A page from {origin} tried to connect to Madoi. If it is yours, allow it in Settings, "
        "Bridge tab, \"Web pages allowed\"."),
    "allow": QT_TRANSLATE_NOOP("refused_origins", "Allow"),
    "allowed.title": QT_TRANSLATE_NOOP("refused_origins", "Web page allowed"),
    "allowed.text": QT_TRANSLATE_NOOP(
        "refused_origins", "Pages from {origin} may connect now (Settings, Bridge tab, to take it back)."),
    "failed": QT_TRANSLATE_NOOP("refused_origins", "Could not allow {origin}: {error}"),
    "more": QT_TRANSLATE_NOOP(
        "refused_origins", "More web pages were refused; they are not shown one by one (the log names them)."),
})
SHOWN_CAP: Final = 8  # origins named in a session: a program can send any Origin, the window must not fill up


class SettingsOwner(Protocol):
    """Who holds the window's settings and applies them after another part saved them (ui/window/desktop_extras.py)."""

    @property
    def settings(self) -> Settings: ...

    def saved_elsewhere(self, settings: Settings) -> None: ...


class RefusedOrigins(QObject):
    """Call :meth:`attach` once the runtime started, :meth:`detach` before it stops. Without ``owner`` and ``store``
    the notification only says where to allow the page."""

    def __init__(self, bus: Bus, notifications: NotificationArea, *,
                 owner: SettingsOwner | None = None, store: SettingsStore | None = None) -> None:
        super().__init__(notifications)
        self.notifications = notifications
        self.shown: set[str] = set()
        self._owner = owner
        self._store = store
        self._bus_link = BusFollower(bus, ("events",))
        self._tasks = TaskSet("refused-origins")

    def attach(self) -> None:
        self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        self._bus_link.stop()
        self._tasks.cancel()

    def _t(self, key: str, **values: object) -> str:
        return _TEXTS.text(key, **values)

    def _on_item(self, item: BusItem) -> None:
        if not isinstance(item, BridgeOriginRefused) or item.origin in self.shown or len(self.shown) > SHOWN_CAP:
            return
        self.shown.add(item.origin)
        if len(self.shown) > SHOWN_CAP:
            self.notifications.notify(self._t("title"), self._t("more"), "warning")
            return
        action = None
        if self._owner is not None and self._store is not None and self._allowable(item.origin):
            action = (self._t("allow"), functools.partial(self.allow, item.origin))
        self.notifications.notify(self._t("title"), self._t("text", origin=item.origin or "?"), "warning",
                                  action=action)

    def _allowable(self, origin: str) -> bool:
        """Only an origin the settings take (never ``null``, nothing that is not ``scheme://host[:port]``)."""
        assert self._owner is not None
        try:
            self._owner.settings.bridge.model_copy().allowed_origins = [origin]  # validated on assignment
        except ValueError:
            return False
        return True

    def allow(self, origin: str) -> None:
        """Adds ``origin`` to the allowed web pages, saves the settings and has the window apply them."""
        self._tasks.spawn(self._allow(origin), name="allow-origin")

    async def _allow(self, origin: str) -> None:
        assert self._owner is not None
        assert self._store is not None
        settings = self._owner.settings
        bridge = settings.bridge.model_copy()
        try:
            if origin.strip().lower() not in bridge.allowed_origins:
                bridge.allowed_origins = [*bridge.allowed_origins, origin]  # validated: the settings' own form
            chosen = settings.model_copy(update={"bridge": bridge})
            await self._store.save(chosen)
        except (ValueError, OSError) as err:
            log.warning("could not allow %r: %s", origin, err)
            self.notifications.notify(self._t("title"), self._t("failed", origin=origin, error=err), "error")
            return
        log.info("bridge: the user allowed web pages from %r", origin)
        self._owner.saved_elsewhere(chosen)
        self.notifications.notify(self._t("allowed.title"), self._t("allowed.text", origin=origin), "info")
