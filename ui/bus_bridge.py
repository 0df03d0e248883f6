"""Carries bus items to Qt signals. The bus handler runs on the loop (the Qt main thread under qasync)."""

from __future__ import annotations

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
