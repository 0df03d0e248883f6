"""In-process publish/subscribe on the protocol's topics.

Delivery model: every subscriber owns a bounded queue and one consumer task, so a slow or failing subscriber never
delays the publisher or the other subscribers. ``publish`` never blocks and never raises for a subscriber's sake;
it may be called from any thread (it hops onto the loop with ``call_soon_threadsafe``).

Overflow policy: when a subscriber's queue is full, the *oldest* queued item is dropped to make room
(``"drop_oldest"``, right for views that only need the latest state), or the *new* item is dropped
(``"drop_newest"``, right when earlier items give later ones their meaning). Either way the drop is counted in
:class:`SubscriptionStats` and logged once per burst, and memory stays bounded by ``maxsize`` items.

Direct delivery (``direct=True``) is for subscribers that never block, e.g. one that hands each item to a
socket or resolves a future: the (sync) handler runs inside ``publish`` on the loop thread, so the item costs no
trip through a queue and a task. Such a subscriber has no queue at all, so nothing to bound or overflow; its
failures are logged, counted in :class:`SubscriptionStats` and isolated exactly like a queued subscriber's, and a
call that takes longer than :data:`DIRECT_SLOW_S` is logged (once per subscriber) as a contract violation. A
publish from another thread still hops onto the loop first, so direct handlers only ever run on the loop thread.
A publish made *during* a delivery (by a direct handler) is delivered once the current item has reached every
subscriber, so every subscriber, direct or queued, sees items in publish order.

Besides the four wire topics there is a local ``events`` topic for in-process notifications (streamed text,
device status, conversation state) that the bridge never relays.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, TypeAlias

from companions.wire.protocol import WIRE_TOPICS, Topic, WireItem, topic_of

log = logging.getLogger(__name__)

BusTopic: TypeAlias = Topic | Literal["events"]
ALL_TOPICS: Final[tuple[BusTopic, ...]] = (*WIRE_TOPICS, "events")
OverflowPolicy: TypeAlias = Literal["drop_oldest", "drop_newest"]
Handler: TypeAlias = Callable[[Any], Awaitable[None] | None]
DEFAULT_MAXSIZE: Final = 1024
_BACKLOG_BATCH: Final = 1000  # items delivered in one go when direct handlers publish in reply
DIRECT_SLOW_S: Final = 0.005  # a direct handler running this long blocks the loop (rule 3: ~5 ms)


class LocalEvent:
    """Base class of in-process notifications carried on the ``events`` topic (never sent over the bridge)."""


BusItem: TypeAlias = WireItem | LocalEvent


def bus_topic_of(item: BusItem) -> BusTopic:
    if isinstance(item, LocalEvent):
        return "events"
    return topic_of(item)


@dataclass
class SubscriptionStats:
    delivered: int = 0
    dropped: int = 0
    failed: int = 0
    slow: int = 0  # direct handler calls that took longer than DIRECT_SLOW_S


class Subscription(Protocol):
    name: str
    topics: frozenset[BusTopic]
    stats: SubscriptionStats

    def close(self) -> None:
        """Stops delivery; queued items are discarded. Idempotent."""

    async def settled(self, timeout: float = 1.0) -> bool:
        """Waits until every item queued for this subscriber so far has been handled; False if the timeout passed
        first (a direct subscriber is always settled: it handles each item inside ``publish``)."""


class Bus(Protocol):
    """The bus port. The in-process implementation is the default; a network transport can implement it too."""

    def publish(self, item: BusItem) -> None:
        """Hands ``item`` to every subscriber of its topic. Never blocks; safe from any thread."""

    def subscribe(
        self,
        topics: BusTopic | Iterable[BusTopic],
        handler: Handler,
        *,
        name: str = "",
        maxsize: int = DEFAULT_MAXSIZE,
        overflow: OverflowPolicy = "drop_oldest",
        direct: bool = False,
    ) -> Subscription:
        """Calls ``handler`` (sync or async) for every item published on ``topics``, in publish order.

        With ``direct=True`` the handler must be sync and never block: it is called inside ``publish`` (see the
        module docstring); ``maxsize`` and ``overflow`` do not apply.
        """

    async def drain(self, timeout: float = 1.0) -> bool:
        """Waits until every queued item has been handled; False if the timeout passed first."""

    async def aclose(self) -> None:
        """Stops every subscriber and waits for their tasks."""


@dataclass(eq=False)
class _Subscriber:
    bus: InProcessBus
    name: str
    topics: frozenset[BusTopic]
    handler: Handler
    maxsize: int
    overflow: OverflowPolicy
    stats: SubscriptionStats = field(default_factory=SubscriptionStats)
    queue: collections.deque[BusItem] = field(default_factory=collections.deque)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    closed: bool = False
    _warned_drop: bool = False

    def offer(self, item: BusItem) -> None:
        if self.closed:
            return
        if len(self.queue) >= self.maxsize:
            self.stats.dropped += 1
            if not self._warned_drop:
                log.warning("bus subscriber %r is full (%d items): dropping (%s)", self.name, self.maxsize,
                            self.overflow)
                self._warned_drop = True
            if self.overflow == "drop_newest":
                return
            self.queue.popleft()
        self.queue.append(item)
        self.idle.clear()
        self.wakeup.set()

    async def run(self) -> None:
        while not self.closed:
            if not self.queue:
                self.idle.set()
                self._warned_drop = False
                self.wakeup.clear()
                await self.wakeup.wait()
                continue
            item = self.queue.popleft()
            try:
                result = self.handler(item)
                if inspect.isawaitable(result):
                    await result
                self.stats.delivered += 1
            except asyncio.CancelledError:
                raise
            except Exception:
                self.stats.failed += 1
                log.exception("bus subscriber %r failed on %s; it stays subscribed", self.name,
                              type(item).__name__)

    async def settled(self, timeout: float = 1.0) -> bool:
        try:
            async with asyncio.timeout(timeout):
                await self.idle.wait()
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.queue.clear()
        self.idle.set()
        self.bus._remove(self)
        if self.task is not None:
            self.task.cancel()


@dataclass(eq=False)
class _DirectSubscriber:
    bus: InProcessBus
    name: str
    topics: frozenset[BusTopic]
    handler: Callable[[Any], object]
    stats: SubscriptionStats = field(default_factory=SubscriptionStats)
    closed: bool = False

    def offer(self, item: BusItem) -> None:
        if self.closed:
            return
        started = time.perf_counter()
        try:
            result = self.handler(item)
        except Exception:
            self.stats.failed += 1
            log.exception("bus subscriber %r failed on %s; it stays subscribed", self.name, type(item).__name__)
            return
        finally:
            elapsed = time.perf_counter() - started
            if elapsed > DIRECT_SLOW_S:
                self.stats.slow += 1
                if self.stats.slow == 1:
                    log.warning("direct bus subscriber %r took %.1f ms on %s: direct handlers must not block",
                                self.name, elapsed * 1e3, type(item).__name__)
        if result is not None and inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()  # never awaited: no "coroutine was never awaited" warning later
            self.stats.failed += 1
            log.error("direct bus subscriber %r returned an awaitable; its work was not done", self.name)
            return
        self.stats.delivered += 1

    async def settled(self, timeout: float = 1.0) -> bool:
        return True

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.bus._remove(self)


class InProcessBus:
    """The default :class:`Bus`: asyncio-based, bound to the loop it is first used on."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._loop_thread: int | None = None
        # Copy-on-write tuples: a handler may (un)subscribe during a delivery that iterates them.
        self._subscribers: dict[BusTopic, tuple[_Subscriber | _DirectSubscriber, ...]] = {
            t: () for t in ALL_TOPICS}
        self._all: set[_Subscriber | _DirectSubscriber] = set()
        self._closed = False
        self._delivering = False
        self._backlog: collections.deque[BusItem] = collections.deque()  # published during a delivery
        self.published = 0

    def _bind(self) -> None:
        """Binds the bus to the running loop (the first call from inside a loop decides)."""
        if self._loop_thread is not None:
            return
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            raise RuntimeError("the bus is bound to another event loop")
        self._loop = loop
        self._loop_thread = threading.get_ident()

    def publish(self, item: BusItem) -> None:
        if self._closed:
            return
        if self._loop_thread is None:
            try:
                self._bind()
            except RuntimeError:
                if self._loop is None:
                    raise RuntimeError("publish from a thread before the bus was bound to a loop") from None
        if threading.get_ident() == self._loop_thread:
            self._deliver(item)
            return
        loop = self._loop
        assert loop is not None
        if not loop.is_closed():
            # A loop closing between the check and the call is harmless: the item is simply not delivered.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._deliver, item)

    def _deliver(self, item: BusItem) -> None:
        if self._closed:
            return
        if self._delivering:  # published by a direct handler: after the current item, to keep the order
            self._backlog.append(item)
            return
        self._delivering = True
        try:
            self._offer(item)
        except BaseException:
            self._delivering = False
            raise
        if self._backlog:
            self._run_backlog()
        else:
            self._delivering = False

    def _run_backlog(self) -> None:
        try:
            for _ in range(_BACKLOG_BATCH):
                if not self._backlog or self._closed:
                    break
                self._offer(self._backlog.popleft())
        except BaseException:
            self._delivering = False
            raise
        if self._backlog and not self._closed:
            # Direct handlers that keep publishing in reply: let the loop breathe between batches (publishes
            # meanwhile still join the backlog, in order).
            assert self._loop is not None
            self._loop.call_soon(self._run_backlog)
            return
        self._backlog.clear()
        self._delivering = False

    def _offer(self, item: BusItem) -> None:
        self.published += 1
        for sub in self._subscribers[bus_topic_of(item)]:
            sub.offer(item)

    def subscribe(
        self,
        topics: BusTopic | Iterable[BusTopic],
        handler: Handler,
        *,
        name: str = "",
        maxsize: int = DEFAULT_MAXSIZE,
        overflow: OverflowPolicy = "drop_oldest",
        direct: bool = False,
    ) -> Subscription:
        if self._closed:
            raise RuntimeError("the bus is closed")
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        topic_set = frozenset([topics] if isinstance(topics, str) else topics)
        unknown = topic_set - set(ALL_TOPICS)
        if unknown:
            raise ValueError(f"unknown topics: {sorted(unknown)}")
        if direct and inspect.iscoroutinefunction(handler):
            raise ValueError("a direct subscriber's handler must be sync (it runs inside publish)")
        self._bind()
        name = name or getattr(handler, "__qualname__", "subscriber")
        sub: _Subscriber | _DirectSubscriber
        if direct:
            sub = _DirectSubscriber(self, name, topic_set, handler)
        else:
            sub = _Subscriber(self, name, topic_set, handler, maxsize, overflow)
            sub.idle.set()
            sub.task = asyncio.get_running_loop().create_task(sub.run(), name=f"bus:{sub.name}")
        for topic in topic_set:
            self._subscribers[topic] = (*self._subscribers[topic], sub)
        self._all.add(sub)
        return sub

    def _remove(self, sub: _Subscriber | _DirectSubscriber) -> None:
        for topic in sub.topics:
            self._subscribers[topic] = tuple(s for s in self._subscribers[topic] if s is not sub)
        self._all.discard(sub)

    @property
    def subscriber_count(self) -> int:
        return len(self._all)

    async def drain(self, timeout: float = 1.0) -> bool:
        waits = [s.idle.wait() for s in list(self._all) if isinstance(s, _Subscriber)]
        if not waits:
            return True
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*waits)
        except TimeoutError:
            return False
        return True

    async def aclose(self) -> None:
        self._closed = True
        subs = list(self._all)
        tasks = [s.task for s in subs if isinstance(s, _Subscriber) and s.task is not None]
        for sub in reversed(subs):
            sub.close()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
