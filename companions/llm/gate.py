"""A concurrency gate for one model endpoint: at most ``limit`` requests in flight, the rest wait by priority.

Local servers often run one request at a time, and llama-cpp-python's server (``interrupt_requests=True``, its
default) even ends the request in flight when another one arrives. So every model object of one endpoint shares
one gate (see :mod:`companions.llm.capabilities`): a waiting request with a higher ``priority`` goes first (the
chosen speaker's reply before votes for a later turn), equal priorities go in arrival order. ``limit=None`` lets
everything through at once (hosted APIs).

The gate is safe across threads and event loops: its state is behind a ``threading.Lock`` and a waiter is woken on
its own loop, because the same endpoint may be used from the app's loop and from a helper thread's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


@dataclass(order=True)
class _Waiter:
    rank: tuple[int, int]
    future: asyncio.Future[None] = field(compare=False)
    granted: bool = field(default=False, compare=False)
    gone: bool = field(default=False, compare=False)


class ConcurrencyGate:
    """See the module docstring. ``limit`` may change at any time (:meth:`set_limit`)."""

    def __init__(self, limit: int | None = None) -> None:
        self._lock = threading.Lock()
        self._limit = limit
        self._active = 0
        self._waiters: list[_Waiter] = []
        self._order = itertools.count()

    @property
    def limit(self) -> int | None:
        return self._limit

    @property
    def active(self) -> int:
        """Requests holding a slot now."""
        return self._active

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot now."""
        with self._lock:
            return sum(not w.gone for w in self._waiters)

    def set_limit(self, limit: int | None) -> None:
        """Changes the limit; a raised limit lets waiters in at once, a lowered one applies to the next request."""
        with self._lock:
            self._limit = None if limit is None else max(1, limit)
            self._grant_locked()

    @contextlib.asynccontextmanager
    async def slot(self, priority: int = 0) -> AsyncIterator[None]:
        """Holds one slot for the body of the ``async with``; waits (by ``priority``, higher first) when full."""
        await self._acquire(priority)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, priority: int) -> None:
        with self._lock:
            if self._has_room_locked() and not any(not w.gone for w in self._waiters):
                self._active += 1
                return
            waiter = _Waiter((-priority, next(self._order)), asyncio.get_running_loop().create_future())
            heapq.heappush(self._waiters, waiter)
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self._lock:
                waiter.gone = True
                if waiter.granted:  # the slot was handed over just as the waiter gave up: pass it on
                    self._active -= 1
                    self._grant_locked()
            raise

    def _release(self) -> None:
        with self._lock:
            self._active -= 1
            self._grant_locked()

    def _has_room_locked(self) -> bool:
        return self._limit is None or self._active < self._limit

    def _grant_locked(self) -> None:
        while self._waiters and self._has_room_locked():
            waiter = heapq.heappop(self._waiters)
            if waiter.gone:
                continue
            # Counted before it is woken: a waiter on another thread's loop may run (and read ``active``) before
            # this thread gets past _wake (seen as a flaky test under load).
            waiter.granted = True
            self._active += 1
            if not _wake(waiter.future):  # its loop is closed: nobody is waiting there any more
                waiter.granted = False
                self._active -= 1


def _wake(future: asyncio.Future[None]) -> bool:
    loop = future.get_loop()
    if loop.is_closed():
        return False
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        if not future.done():
            future.set_result(None)
    else:
        loop.call_soon_threadsafe(lambda: None if future.done() else future.set_result(None))
    return True
