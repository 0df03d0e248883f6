"""Event-loop lag probe: how late does the loop run a callback scheduled for a known time?

A lag of more than one frame (16 ms at 60 Hz) is a visible stutter in the UI, and a sign that something blocks
the loop that should run in an executor. The probe is a task owned by whoever starts it (the runtime).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
from dataclasses import dataclass
from typing import Final

DEFAULT_INTERVAL: Final = 0.005
DEFAULT_WINDOW: Final = 20_000


@dataclass(frozen=True)
class LagStats:
    """Lag figures in milliseconds over the probe's window."""

    samples: int
    p50_ms: float
    p99_ms: float
    max_ms: float


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank method; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


class LagProbe:
    """Samples loop lag every ``interval`` seconds into a bounded window."""

    def __init__(self, interval: float = DEFAULT_INTERVAL, window: int = DEFAULT_WINDOW) -> None:
        self.interval = interval
        self._lags: collections.deque[float] = collections.deque(maxlen=window)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="lag-probe")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def reset(self) -> None:
        self._lags.clear()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.interval
            await asyncio.sleep(self.interval)
            self._lags.append(max(0.0, loop.time() - due))

    def stats(self) -> LagStats:
        lags_ms = [lag * 1000.0 for lag in self._lags]
        return LagStats(
            samples=len(lags_ms),
            p50_ms=percentile(lags_ms, 0.50),
            p99_ms=percentile(lags_ms, 0.99),
            max_ms=max(lags_ms) if lags_ms else math.nan,
        )
