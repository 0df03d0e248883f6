"""Carries bus items to Qt signals. The bus handler runs on the loop (the Qt main thread under qasync).

A view that needs only the latest state follows through a bounded queue that drops the oldest items under load; a
view that must see every item (the chat: no line may go missing) follows *losslessly*: a direct bus subscriber
that posts each item to Qt's event queue (a queued signal: cheap inside ``publish``, in order, never dropped), so
the items wait in Qt's queue, not in a bounded one, until the GUI thread draws them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal

from companions.wire.bus import Bus, BusItem, BusTopic, Subscription


class BusSignals(QObject):
    """Emits ``item`` for every bus item on the chosen topics, on the GUI thread."""

    item = Signal(object)

    def __init__(self, bus: Bus, topics: tuple[BusTopic, ...], parent: QObject | None = None, *,
                 lossless: bool = False) -> None:
        super().__init__(parent)
        self._subscription: Subscription | None = (
            bus.subscribe(topics, self._on_item, name="ui-lossless", direct=True) if lossless
            else bus.subscribe(topics, self._on_item, name="ui", maxsize=4096))

    def _on_item(self, item: BusItem) -> None:
        self.item.emit(item)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None


class BusFollower:
    """A panel's link to the bus: :meth:`follow` delivers the items on ``topics`` to a slot on the GUI thread until
    :meth:`stop`. Both are idempotent, so a panel's attach and detach can be called in any order, twice."""

    def __init__(self, bus: Bus, topics: tuple[BusTopic, ...], *, lossless: bool = False) -> None:
        self._bus = bus
        self._topics = topics
        self._lossless = lossless  # every item, never dropped (see the module's description)
        self._signals: BusSignals | None = None

    @property
    def active(self) -> bool:
        return self._signals is not None

    def follow(self, parent: QObject, slot: Callable[[BusItem], None]) -> None:
        """Starts delivering to ``slot`` (a bound method of ``parent``, never a lambda holding it)."""
        if self._signals is None:
            self._signals = BusSignals(self._bus, self._topics, parent, lossless=self._lossless)
            if self._lossless:  # posted to Qt's queue inside publish, drawn when the GUI thread gets to it
                self._signals.item.connect(slot, Qt.ConnectionType.QueuedConnection)
            else:
                self._signals.item.connect(slot)

    def stop(self) -> None:
        if self._signals is not None:
            self._signals.close()
            self._signals = None
