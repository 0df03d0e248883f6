"""Who speaks for whom on the network: every ``from`` is checked against the peer that signed it, within bounds.

The signer of a gossipsub message is proven by its signature (strict signing); nothing inside the message is. So:

- **This app's own ids are reserved.** This app's companions and its user never come from a peer: a peer's
  ``from`` equal to one of this app's companions is dropped; a peer's person called like this app's user is that
  peer's user (``user@<peer>``, companions/network/people.py), never this one. No peer may announce, vote or act as
  any of them, nor as an id in the form of a person elsewhere (``<name>@<peer>``), nor announce or vote as
  ``user``/``user_<name>`` (people's names, by Madoi's and the reference's convention: a person never votes).
  This app's companions are read as they are at each check (the cast changes while the app runs): a companion
  the user adds is reserved from then on, even against a peer that announced that id first.
- **A companion belongs to one peer**: the one that announced it in its metadata, or (a reference companion whose
  metadata this node never got) that first voted as it. Another peer using that id is forging.
- **Anyone else a peer speaks as is a person there**: its own ``<name>@<peer>`` on this bus, so two machines'
  users never merge and no peer can take over another's people.
- **Bounds**: companions per peer and in all (a message to everyone names every companion, within the protocol's
  ``to`` limit), companions known only by their votes, people per peer and in all, peers with anything kept here
  at once. A companion past a bound is refused, never another's place taken; a peer that runs no companion here
  (only people) gives its place to a newer peer when there is no room left.

Rates: token buckets per peer for items and for bytes, one more shared by the peers that run no companion here, and
one for the messages of a peer's people (each starts a turn).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from companions.network.people import SEPARATOR, looks_like_a_user
from companions.network.untrusted import Refused
from companions.trust.policy import NOTICED
from companions.wire.protocol import MAX_RECIPIENTS

RATE_PER_S: Final = 50.0  # sustained items per second and peer (a turn of ten companions is ~12 items)
BURST: Final = 200
BYTES_PER_S: Final = 64 * 1024  # sustained bytes per second and peer (a line is well under 1 KiB)
BYTES_BURST: Final = 512 * 1024
STRANGERS_RATE_PER_S: Final = 50.0  # all peers that run no companion here, together
STRANGERS_BURST: Final = 200
PEOPLE_RATE_PER_S: Final = 30 / 60
PEOPLE_BURST: Final = 10
"""Messages from the people of one peer: faster than people type (a few quick lines in a row included). Each one
interrupts the conversation and opens a turn (a vote round of every companion addressed: model requests, perhaps
billed), so a peer must not start turns faster than its people could. A message dropped here is one this node
never hears while the sender's node does: the nodes then differ on that turn, so the bound is well above typing."""

MAX_COMPANIONS_PER_PEER: Final = 16  # a reference node runs one companion, a Madoi process its cast (3 samples)
MAX_REMOTE_COMPANIONS: Final = 48
"""Companions from elsewhere in all. A user's message to everyone names every companion (reference nodes answer only
messages naming them), so this app's own and these must fit the protocol's ``to`` limit (MAX_RECIPIENTS, 64) with
room for the user; every name is also in every local companion's prompt."""
MAX_UNANNOUNCED_PER_PEER: Final = 4
MAX_UNANNOUNCED: Final = 8
"""Companions known only because they voted (a reference node sends nothing to a peer it already knows, so its
companion's metadata may never come). Any signer can vote, even one never connected here (a message relayed by
another peer, signed with a fresh key): these few places are all such signers can take; the rest of
MAX_REMOTE_COMPANIONS is for companions a directly connected peer announced in its metadata."""
MAX_PEOPLE_PER_PEER: Final = 8  # a Madoi process has one user; a reference firehose relays the users of its clients
MAX_PEOPLE: Final = 64
MAX_PEERS: Final = 64
"""Signers with anything kept here at once (companions, people, rate buckets). A new one takes the place of the one
heard least recently among those that run no companion here; it is refused only when every one of them runs one,
which the companions' bounds (MAX_REMOTE_COMPANIONS < MAX_PEERS) never allow."""


def remote_companion_limit(local_companions: int) -> int:
    """How many companions from elsewhere fit beside ``local_companions`` of this app's own: a message to everyone
    names them all and the user within MAX_RECIPIENTS."""
    return max(0, min(MAX_REMOTE_COMPANIONS, MAX_RECIPIENTS - 1 - local_companions))


class PeerDirectory:
    """The ``from`` check: which peer owns which companion id, and which people each peer has spoken as."""

    def __init__(self, local_ids: Iterable[str] | Callable[[], Iterable[str]], user_id: str = "user", *,
                 max_companions: int | None = None) -> None:
        if callable(local_ids):
            self._local_ids = local_ids
        else:
            fixed = frozenset(local_ids)
            self._local_ids = lambda: fixed
        self.user_id = user_id
        self._max_companions = max_companions
        self._owner: dict[str, str] = {}
        self._unannounced: set[str] = set()  # companions known only by their votes
        self._people: dict[str, set[str]] = {}  # peer -> names of its people heard here
        self._peers: collections.OrderedDict[str, None] = collections.OrderedDict()  # least recently heard first

    @property
    def local_ids(self) -> frozenset[str]:
        """This app's companions now (the cast changes while running: each check reads it as it is)."""
        return frozenset(self._local_ids())

    @property
    def max_companions(self) -> int:
        """Companions from elsewhere that may be claimed now (fewer when this app's cast grows; those claimed
        already stay)."""
        if self._max_companions is not None:
            return self._max_companions
        return remote_companion_limit(len(self.local_ids))

    # -- peers --------------------------------------------------------------------------------------------------
    def hear(self, peer: str) -> tuple[str, ...]:
        """Notes ``peer`` as heard now; returns the peers forgotten to make room for it (they owned no companion).

        Raises:
            Refused: MAX_PEERS peers that run companions here are known already.
        """
        if peer in self._peers:
            self._peers.move_to_end(peer)
            return ()
        forgotten: list[str] = []
        while len(self._peers) >= MAX_PEERS:
            forgotten.append(self._forget_idle(peer, f"{MAX_PEERS} peers with companions here already"))
        self._peers[peer] = None
        return tuple(forgotten)

    def _forget_idle(self, keep: str, refusal: str) -> str:
        """Forgets the peer heard least recently that runs no companion here (never ``keep``); returns it."""
        idle = next((p for p in self._peers if p != keep and not self.ids_of(p)), None)
        if idle is None:
            raise Refused("too many", refusal)
        self.release(idle)
        return idle

    def known(self, peer: str) -> bool:
        """Whether ``peer`` runs a companion here (else it is a stranger, rated with the other strangers)."""
        return any(owner == peer for owner in self._owner.values())

    def release(self, peer: str) -> tuple[str, ...]:
        """Forgets everything ``peer`` owned (it left); returns its companions' ids."""
        ids = self.ids_of(peer)
        for i in ids:
            del self._owner[i]
            self._unannounced.discard(i)
        self._people.pop(peer, None)
        self._peers.pop(peer, None)
        return ids

    # -- companions ---------------------------------------------------------------------------------------------
    def owner(self, sender: str) -> str | None:
        return self._owner.get(sender)

    def ids_of(self, peer: str) -> tuple[str, ...]:
        return tuple(sorted(i for i, p in self._owner.items() if p == peer))

    def announced_by(self, peer: str) -> tuple[str, ...]:
        """The companions ``peer`` announced in its metadata (not those known only by their votes)."""
        return tuple(i for i in self.ids_of(peer) if i not in self._unannounced)

    def disown(self, companion: str) -> str | None:
        """Unbinds the companion id ``companion`` from its peer (the peer no longer announces it, or it is one of
        this app's companions now); returns that peer, or ``None`` when no peer had it."""
        self._unannounced.discard(companion)
        return self._owner.pop(companion, None)

    def reserved(self, who: str) -> str | None:
        """Why no peer may ever speak as ``who`` (``None``: it is not reserved)."""
        if who in self.local_ids:
            return f"{who!r} is one of this app's companions"
        if who == self.user_id:
            return f"{who!r} is this app's user"
        if who == NOTICED.id:
            return f"{who!r} is what this app noticed"
        if SEPARATOR in who:
            return f"{who!r} is in the form of a person elsewhere (<name>{SEPARATOR}<peer>)"
        return None

    def claim(self, peer: str, companion: str, *, announced: bool = True) -> None:
        """Binds the companion id ``companion`` to ``peer``: it announced it, or (``announced=False``) voted as it.

        Raises:
            Refused: a reserved id or a person's name, another peer's companion, or past a bound.
        """
        why = self.reserved(companion)
        if why is not None:
            raise Refused("reserved", why)
        if looks_like_a_user(companion):
            raise Refused("reserved", f"{companion!r} is a person's name, never a companion's")
        owner = self._owner.get(companion)
        if owner is not None and owner != peer:
            raise Refused("forged", f"{companion!r} belongs to peer {owner}")
        if owner == peer:
            if announced:
                self._unannounced.discard(companion)
            return
        if len(self.ids_of(peer)) >= MAX_COMPANIONS_PER_PEER:
            raise Refused("too many", f"peer {peer} runs {MAX_COMPANIONS_PER_PEER} companions here already")
        if len(self._owner) >= self.max_companions:
            raise Refused("too many", f"{self.max_companions} companions from elsewhere already")
        if not announced:
            if len(self._unannounced) >= MAX_UNANNOUNCED:
                raise Refused("too many", f"{MAX_UNANNOUNCED} companions known only by their votes already")
            if sum(self._owner[c] == peer for c in self._unannounced) >= MAX_UNANNOUNCED_PER_PEER:
                raise Refused("too many", f"peer {peer} voted as {MAX_UNANNOUNCED_PER_PEER} companions it never "
                              "announced already")
            self._unannounced.add(companion)
        self._owner[companion] = peer

    def companion_of(self, peer: str, sender: str) -> None:
        """Checks that ``sender`` is a companion of ``peer`` (a vote or an action must come from one).

        Raises:
            Refused: it is not.
        """
        why = self.reserved(sender)
        if why is not None:
            raise Refused("reserved", why)
        owner = self._owner.get(sender)
        if owner is None:
            raise Refused("not a companion", f"{sender!r} is no companion of peer {peer}")
        if owner != peer:
            raise Refused("forged", f"{sender!r} belongs to peer {owner}")

    # -- people -------------------------------------------------------------------------------------------------
    def speaker(self, peer: str, sender: str) -> bool:
        """Whether a message ``from`` ``sender``, signed by ``peer``, is its companion's (``True``) or a person's
        there (``False``: the caller names them ``<sender>@<peer>``).

        Raises:
            Refused: ``sender`` is one of this app's companions, in a person's form, another peer's companion, or
                a new person past the bounds.
        """
        if sender in self.local_ids or SEPARATOR in sender:  # before the owner: a companion may become this app's
            raise Refused("reserved", self.reserved(sender) or sender)
        owner = self._owner.get(sender)
        if owner == peer:
            return True
        if owner is not None:
            raise Refused("forged", f"{sender!r} belongs to peer {owner}")
        people = self._people.setdefault(peer, set())
        if sender not in people:
            if len(people) >= MAX_PEOPLE_PER_PEER:
                raise Refused("too many", f"peer {peer} spoke as {MAX_PEOPLE_PER_PEER} people already")
            while sum(len(p) for p in self._people.values()) >= MAX_PEOPLE:
                self._forget_idle(peer, f"{MAX_PEOPLE} people from elsewhere already")
            people.add(sender)
        return False

    def person_of(self, peer: str, name: str) -> bool:
        """Whether ``peer`` has spoken as the person ``name`` here."""
        return name in self._people.get(peer, ())

    def people(self) -> tuple[tuple[str, str], ...]:
        """Every (peer, name) of the people heard, sorted."""
        return tuple(sorted((peer, name) for peer, names in self._people.items() for name in names))


@dataclass
class _Bucket:
    tokens: float
    stamp: float

    def take(self, now: float, rate: float, burst: float, amount: float) -> bool:
        self.tokens = min(burst, self.tokens + (now - self.stamp) * rate)
        self.stamp = now
        if self.tokens >= amount:
            self.tokens -= amount
            return True
        return False


@dataclass
class RateLimit:
    """Token buckets per peer (items and bytes) and one shared by strangers: floods are dropped, never queued."""

    rate_per_s: float = RATE_PER_S
    burst: int = BURST
    bytes_per_s: float = BYTES_PER_S
    bytes_burst: int = BYTES_BURST
    strangers_rate_per_s: float = STRANGERS_RATE_PER_S
    strangers_burst: int = STRANGERS_BURST
    people_rate_per_s: float = PEOPLE_RATE_PER_S
    people_burst: int = PEOPLE_BURST
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[_Bucket, _Bucket]] = field(default_factory=dict)
    _strangers: _Bucket | None = None
    _people: dict[str, _Bucket] = field(default_factory=dict)
    _dropped: collections.Counter[str] = field(default_factory=collections.Counter)

    def allow(self, peer: str, size: int = 0, *, stranger: bool = False) -> bool:
        now = self.clock()
        buckets = self._buckets.get(peer)
        if buckets is None:
            buckets = self._buckets[peer] = (_Bucket(float(self.burst), now), _Bucket(float(self.bytes_burst), now))
        items, volume = buckets
        allowed = items.take(now, self.rate_per_s, self.burst, 1.0) and \
            volume.take(now, self.bytes_per_s, self.bytes_burst, float(min(size, self.bytes_burst)))
        if allowed and stranger:
            if self._strangers is None:
                self._strangers = _Bucket(float(self.strangers_burst), now)
            allowed = self._strangers.take(now, self.strangers_rate_per_s, self.strangers_burst, 1.0)
        if not allowed:
            self._dropped[peer] += 1
        return allowed

    def allow_person(self, peer: str) -> bool:
        """Whether a message from one of ``peer``'s people (it starts a turn) may come now."""
        now = self.clock()
        bucket = self._people.get(peer)
        if bucket is None:
            bucket = self._people[peer] = _Bucket(float(self.people_burst), now)
        if bucket.take(now, self.people_rate_per_s, self.people_burst, 1.0):
            return True
        self._dropped[peer] += 1
        return False

    def dropped(self, peer: str) -> int:
        return self._dropped.get(peer, 0)

    def forget(self, peer: str) -> None:
        self._buckets.pop(peer, None)
        self._people.pop(peer, None)
        self._dropped.pop(peer, None)
