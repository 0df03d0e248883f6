"""Read models that follow the bus: attached to a bus, they apply every item of its ``events`` topic until closed.

A read model states how it is subscribed in its class line, and writes only what it does with an item::

    class SourceDirectory(EventsFollower, name="trust-sources", direct=True):
        def apply(self, item: BusItem) -> None: ...
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from companions.wire.bus import DEFAULT_MAXSIZE, Bus, BusItem, Subscription


@dataclass(frozen=True)
class _Subscribing:
    name: str
    maxsize: int
    direct: bool


class EventsFollower(ABC):
    """Follows one bus's ``events`` topic from :meth:`attach` to :meth:`close`: each item reaches :meth:`apply`.

    The class keywords are the subscription's: ``name`` (in the bus's logs), ``maxsize`` (the queue's bound) or
    ``direct=True`` (applied inside ``publish``: ``apply`` must never block).
    """

    _subscribing: ClassVar[_Subscribing] = _Subscribing("", DEFAULT_MAXSIZE, direct=False)
    _subscription: Subscription | None = None

    def __init_subclass__(cls, *, name: str = "", maxsize: int = DEFAULT_MAXSIZE, direct: bool = False,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._subscribing = _Subscribing(name or cls.__qualname__, maxsize, direct)

    def attach(self, bus: Bus) -> None:
        """Follows ``bus`` from now on (and no longer the bus it followed before, if any)."""
        self.close()
        how = self._subscribing
        self._subscription = bus.subscribe("events", self.apply, name=how.name, maxsize=how.maxsize,
                                           direct=how.direct)

    def close(self) -> None:
        """Stops following; idempotent."""
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    @abstractmethod
    def apply(self, item: BusItem) -> None:
        """Takes in one item of the ``events`` topic (any kind: a follower ignores those it does not keep)."""
