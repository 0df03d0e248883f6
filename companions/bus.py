"""In-process publish/subscribe on the protocol's topics.

Delivery model: every subscriber owns a bounded queue and one consumer task, so a slow or failing subscriber never
delays the publisher or the other subscribers. ``publish`` never blocks and never raises for a subscriber's sake;
it may be called from any thread (it hops onto the loop with ``call_soon_threadsafe``).

Overflow policy: when a subscriber's queue is full, the *oldest* queued item is dropped to make room
(``"drop_oldest"``, right for views that only need the latest state), or the *new* item is dropped
(``"drop_newest"``, right when earlier items give later ones their meaning). Either way the drop is counted in
:class:`SubscriptionStats` and logged once per burst, and memory stays bounded by ``maxsize`` items.

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
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, TypeAlias

from companions.protocol import WIRE_TOPICS, Topic, WireItem, topic_of

log = logging.getLogger(__name__)

BusTopic: TypeAlias = Topic | Literal["events"]
ALL_TOPICS: Final[tuple[BusTopic, ...]] = (*WIRE_TOPICS, "events")
OverflowPolicy: TypeAlias = Literal["drop_oldest", "drop_newest"]
Handler: TypeAlias = Callable[[Any], Awaitable[None] | None]
DEFAULT_MAXSIZE: Final = 1024


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


class Subscription(Protocol):
    name: str
    topics: frozenset[BusTopic]
    stats: SubscriptionStats

    def close(self) -> None:
        """Stops delivery; queued items are discarded. Idempotent."""


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
    ) -> Subscription:
        """Calls ``handler`` (sync or async) for every item published on ``topics``, in publish order."""

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

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.queue.clear()
        self.idle.set()
        self.bus._remove(self)
        if self.task is not None:
            self.task.cancel()


class InProcessBus:
    """The default :class:`Bus`: asyncio-based, bound to the loop it is first used on."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._loop_thread: int | None = None
        self._subscribers: dict[BusTopic, list[_Subscriber]] = {t: [] for t in ALL_TOPICS}
        self._all: set[_Subscriber] = set()
        self._closed = False
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
    ) -> Subscription:
        if self._closed:
            raise RuntimeError("the bus is closed")
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        topic_set = frozenset([topics] if isinstance(topics, str) else topics)
        unknown = topic_set - set(ALL_TOPICS)
        if unknown:
            raise ValueError(f"unknown topics: {sorted(unknown)}")
        self._bind()
        sub = _Subscriber(self, name or getattr(handler, "__qualname__", "subscriber"), topic_set, handler,
                          maxsize, overflow)
        sub.idle.set()
        sub.task = asyncio.get_running_loop().create_task(sub.run(), name=f"bus:{sub.name}")
        for topic in topic_set:
            self._subscribers[topic].append(sub)
        self._all.add(sub)
        return sub

    def _remove(self, sub: _Subscriber) -> None:
        for topic in sub.topics:
            with contextlib.suppress(ValueError):
                self._subscribers[topic].remove(sub)
        self._all.discard(sub)

    @property
    def subscriber_count(self) -> int:
        return len(self._all)

    async def drain(self, timeout: float = 1.0) -> bool:
        waits = [s.idle.wait() for s in list(self._all)]
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
        tasks = [s.task for s in subs if s.task is not None]
        for sub in reversed(subs):
            sub.close()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
