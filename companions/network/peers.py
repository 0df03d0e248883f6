"""Who speaks for whom on the network: every ``from`` is checked against the peer that signed the message.

A companion id belongs to the peer that announced it in its metadata; an id nobody announced (a user behind the
reference's firehose, a reference companion whose metadata was not sent) belongs to the first peer that uses it.
This process's own companions are never accepted from the network, and query results (which name no sender) are
never taken from it: only this process's broker asks questions of its devices.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from companions.protocol import QueryResult, WireItem, sender_of

RATE_PER_S: Final = 50.0  # sustained items per second and peer (a turn of ten companions is ~12 items)
BURST: Final = 200


class PeerDirectory:
    """The ``from`` check: which peer owns which id."""

    def __init__(self, local_ids: Iterable[str]) -> None:
        self.local_ids = frozenset(local_ids)
        self._owner: dict[str, str] = {}

    def owner(self, sender: str) -> str | None:
        return self._owner.get(sender)

    def ids_of(self, peer: str) -> tuple[str, ...]:
        return tuple(sorted(i for i, p in self._owner.items() if p == peer))

    def claim(self, peer: str, sender: str) -> str | None:
        """Binds ``sender`` to ``peer``; returns why it cannot (``None`` when bound)."""
        if sender in self.local_ids:
            return f"{sender!r} runs in this process"
        owner = self._owner.get(sender)
        if owner is not None and owner != peer:
            return f"{sender!r} belongs to peer {owner}"
        self._owner[sender] = peer
        return None

    def admit(self, peer: str, item: WireItem) -> str | None:
        """Why ``item``, signed by ``peer``, must be dropped (``None``: it may go on)."""
        if isinstance(item, QueryResult):
            return "query results are not taken from the network"
        sender = sender_of(item)
        assert sender is not None
        refused = self.claim(peer, sender)
        return f"forged from: {refused}" if refused is not None else None

    def release(self, peer: str) -> tuple[str, ...]:
        """Forgets everything ``peer`` owned (it left); returns those ids."""
        ids = self.ids_of(peer)
        for i in ids:
            del self._owner[i]
        return ids


@dataclass
class _Bucket:
    tokens: float
    stamp: float
    dropped: int = 0


@dataclass
class RateLimit:
    """A token bucket per peer: floods are dropped (and counted), never queued."""

    rate_per_s: float = RATE_PER_S
    burst: int = BURST
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    def allow(self, peer: str) -> bool:
        now = self.clock()
        bucket = self._buckets.get(peer)
        if bucket is None:
            bucket = self._buckets[peer] = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.stamp) * self.rate_per_s)
        bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return True
        bucket.dropped += 1
        return False

    def dropped(self, peer: str) -> int:
        bucket = self._buckets.get(peer)
        return bucket.dropped if bucket is not None else 0

    def forget(self, peer: str) -> None:
        self._buckets.pop(peer, None)
