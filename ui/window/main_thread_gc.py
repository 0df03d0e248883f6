"""Runs Python's cyclic garbage collector on the GUI thread only.

Widgets caught in reference cycles (a slot closure holding its widget, a Python attribute pointing back at a
parent) are freed by the cyclic collector, which normally runs in whatever thread happens to allocate when a
threshold is crossed: an executor thread (SQLite, OpenCV, pyttsx3, HTTP). Destroying Qt objects there races
with the GUI thread and crashes the process. The guard turns automatic collection off and collects from a
QTimer instead, the approach pyqtgraph and others use; reference counting still frees everything else at once.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 1000


class MainThreadGC(QObject):
    """Keep it alive as long as the application runs (parent it to the QApplication)."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self.collections = 0
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> None:
        """Collects the youngest generation, and older ones when their thresholds say so (as gc would)."""
        count0, count1, count2 = gc.get_count()
        t0, t1, t2 = self._thresholds
        if count0 > t0:
            generation = 2 if count2 > t2 else 1 if count1 > t1 else 0
            gc.collect(generation)
            self.collections += 1

    def stop(self) -> None:
        self._timer.stop()
        if self._was_enabled:
            gc.enable()
