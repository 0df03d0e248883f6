"""Carries bus items to Qt signals. The bus handler runs on the loop (the Qt main thread under qasync)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from companions.bus import Bus, BusItem, BusTopic, Subscription


class BusSignals(QObject):
    """Emits ``item`` for every bus item on the chosen topics, on the GUI thread."""

    item = Signal(object)

    def __init__(self, bus: Bus, topics: tuple[BusTopic, ...], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._subscription: Subscription | None = bus.subscribe(topics, self._on_item, name="ui", maxsize=4096)

    def _on_item(self, item: BusItem) -> None:
        self.item.emit(item)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None


class BusFollower:
    """A panel's link to the bus: :meth:`follow` delivers the items on ``topics`` to a slot on the GUI thread until
    :meth:`stop`. Both are idempotent, so a panel's attach and detach can be called in any order, twice."""

    def __init__(self, bus: Bus, topics: tuple[BusTopic, ...]) -> None:
        self._bus = bus
        self._topics = topics
        self._signals: BusSignals | None = None

    @property
    def active(self) -> bool:
        return self._signals is not None

    def follow(self, parent: QObject, slot: Callable[[BusItem], None]) -> None:
        """Starts delivering to ``slot`` (a bound method of ``parent``, never a lambda holding it)."""
        if self._signals is None:
            self._signals = BusSignals(self._bus, self._topics, parent)
            self._signals.item.connect(slot)

    def stop(self) -> None:
        if self._signals is not None:
            self._signals.close()
            self._signals = None
