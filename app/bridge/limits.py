"""Per-client limits: a token bucket for the frame rate and a leaky strike counter for repeated abuse."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """Allows ``rate`` frames per second on average and bursts of up to ``burst`` frames."""

    def __init__(self, rate: float, burst: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.capacity = max(1.0, burst if burst is not None else rate)
        self._tokens = self.capacity
        self._clock = clock
        self._last = clock()

    def take(self) -> bool:
        """Takes one token; False when the client is over its rate."""
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class AbuseMeter:
    """Counts rejected frames, forgiving ``leak_per_s`` of them per second; over ``limit`` means close."""

    def __init__(self, limit: float, leak_per_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.leak_per_s = leak_per_s
        self.level = 0.0
        self._clock = clock
        self._last = clock()

    def strike(self) -> bool:
        """Records one rejected frame; True when the client has now abused too much."""
        now = self._clock()
        self.level = max(0.0, self.level - (now - self._last) * self.leak_per_s) + 1.0
        self._last = now
        return self.level > self.limit
