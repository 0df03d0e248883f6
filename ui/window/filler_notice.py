"""After repeated stock fillers, a suggestion in plain words: a larger model would talk better, and where to set it.

Each filler is already marked quietly on its bubble (ui/chat/texts.py ``message_note``). When a small model gives
nothing usable again and again (before: 8 of 20 lines on the real 0.5B model were fillers), the person does not
know why the companions keep saying "Yes, I see."; this says it once per run, in a notification whose button opens
the Language model settings. It counts the companions' lines in the active conversation: at least
:data:`FILLERS` stand-ins among the last :data:`WINDOW` lines.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Final

from PySide6.QtCore import QObject

from app.conversations.active import ActiveConversationChanged
from companions.companion.filler import filler_reason
from companions.wire.bus import Bus, BusItem
from companions.wire.protocol import Message
from ui.window.bus_bridge import BusFollower
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.notifications import Level, Notification

WINDOW: Final = 6  # the companions' latest lines looked at
FILLERS: Final = 3  # stand-ins among them that make the suggestion

TEXTS: Final = Texts("filler_notice", {
    "title": QT_TRANSLATE_NOOP("filler_notice", "The model often gives no usable answer"),
    "text": QT_TRANSLATE_NOOP(
        "filler_notice", "{fillers} of the companions' last {lines} lines were short stand-ins: the language model "
                         "repeated itself, answered in another language or gave nothing usable. A larger model "
                         "usually talks much better (for example qwen2.5:3b or larger with Ollama)."),
    "open": QT_TRANSLATE_NOOP("filler_notice", "Open the model settings…"),
})

Notify = Callable[..., Notification]  # NotificationArea.notify


class FillerNotice(QObject):
    """Follows the messages on the bus (:meth:`attach`, :meth:`detach`) and suggests a larger model once per run
    through ``notify`` (in the window's language); its button calls ``open_settings``."""

    def __init__(self, notify: Notify, open_settings: Callable[[], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._notify = notify
        self._open_settings = open_settings
        self._lines: collections.deque[bool] = collections.deque(maxlen=WINDOW)  # filler? per companion line
        self._bus_link: BusFollower | None = None
        self._user_id = ""
        self.suggested: Notification | None = None

    def attach(self, bus: Bus, user_id: str) -> None:
        """Follows ``bus``; messages from ``user_id`` (the user) are not the companions' lines."""
        self._user_id = user_id
        if self._bus_link is None:
            self._bus_link = BusFollower(bus, ("messages", "events"))
            self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        if self._bus_link is not None:
            self._bus_link.stop()
            self._bus_link = None

    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, ActiveConversationChanged):
            self._lines.clear()  # another conversation: its own lines count
        elif isinstance(item, Message) and item.params.from_ != self._user_id:
            self._lines.append(filler_reason(item) is not None)
            self._check()

    def _check(self) -> None:
        fillers = sum(self._lines)
        if self.suggested is not None or fillers < FILLERS:
            return
        level: Level = "info"
        self.suggested = self._notify(
            TEXTS.text("title"), TEXTS.text("text", fillers=fillers, lines=len(self._lines)),
            level, timeout_ms=30_000, action=(TEXTS.text("open"), self._open_settings))
