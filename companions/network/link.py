"""The network link: joins the in-process bus to the reference's peer-to-peer network through a NetworkPort.

Out: what this process's companions and user say (messages, votes, actions) goes to the network as the reference
puts it there: the bare JSON-RPC object on its topic, votes as an array of states. A user's message to everyone
(an empty ``to``) is sent addressed to every companion known (within the protocol's ``to`` limit), so that
reference nodes (which answer only messages naming them) take part.

In: everything is untrusted. A payload is dropped, counted by kind and logged (a bounded number of lines), when its
peer is one too many, it comes in a flood (token buckets per peer, and one shared by peers that run no companion
here), it is oversized, not JSON, nested too deep or holds text that cannot be encoded again (untrusted.py), is not
a valid item of its topic, is a query or a query result (this process's devices answer only its own companions),
or its ``from`` is not the signing peer's to use (peers.py: this app's user and companions are never accepted; a
companion id belongs to one peer; anyone else a peer speaks as is a person there, ``<name>@<peer>`` on this bus,
people.py). What is left goes on the bus as if said here, and a remote companion's votes and lines also reach its
:class:`~companions.network.remote.RemoteParticipant`, so it takes part in this process's turn-taking as an equal.

A private line (one that holds what the camera saw, the user's files or past conversations:
companions/trust/outbound.py) is published only when the user allowed every peer connected now to have it (a
publish reaches them all); otherwise, or with nobody to ask, the peers get ``kept_notice`` in its place.

Both casts change while running. This process's companions are read as they are now (``local`` may be a callable)
and, on ``CastChanged``, served anew (:meth:`NetworkLink.follow_cast`); a peer's announcement is all it runs now
(:meth:`NetworkLink.announced`).
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from companions.common.tasks import TaskSet
from companions.companion.cast import CastChanged
from companions.companion.guests import Guests, RemoteCompanion
from companions.conversation.participant import ParticipantRoster
from companions.network.peers import MAX_PEERS, PeerDirectory, RateLimit
from companions.network.people import PersonIds, RemotePerson, person_id
from companions.network.port import MAX_PAYLOAD_BYTES, NetworkError, NetworkPort, NetworkStatus
from companions.network.remote import MessageOrder, RemoteParticipant
from companions.network.untrusted import Drops, Refused, read_json
from companions.trust.outbound import Outbound, PrivateLine, PrivateWords, kept_notice
from companions.trust.policy import Relation, Source, TrustPolicy
from companions.wire.bus import Bus, BusItem, LocalEvent, Subscription
from companions.wire.protocol import (
    MAX_RECIPIENTS,
    WIRE_TOPICS,
    Action,
    CompanionMetadata,
    Message,
    ProtocolError,
    Query,
    QueryResult,
    State,
    WireItem,
    parse_body,
    to_json_bytes,
)

log = logging.getLogger(__name__)
MAX_STATES_PER_PAYLOAD: Final = 32  # votes in one payload (the reference sends an array: one per companion)
GUEST_PLACE: Final = "network"  # the place of the companions this link adds to the guests
MAX_UNREACHABLE_LISTED: Final = 16  # companions whose peer left, still listed as unreachable (the oldest go first)
LocalCompanions = Sequence[CompanionMetadata] | Callable[[], Sequence[CompanionMetadata]]
"""This app's companions: fixed, or read as they are now (the cast, which changes while the app runs)."""


@dataclass(frozen=True)
class NetworkChanged(LocalEvent):
    """The network's state for views: this process's status, the remote companions seen (reachable or not) and the
    people on other machines who spoke here."""

    status: NetworkStatus
    remote: tuple[RemoteCompanion, ...]
    people: tuple[RemotePerson, ...] = ()


class NetworkLink:
    """A runtime component (start/stop): the bus on one side, a :class:`NetworkPort` on the other."""

    name = "network"

    def __init__(self, bus: Bus, port: NetworkPort, *, local: LocalCompanions, user_id: str,
                 roster: ParticipantRoster | None = None, guests: Guests | None = None,
                 rate: RateLimit | None = None, local_ids: Callable[[], Iterable[str]] | None = None,
                 trust: TrustPolicy | None = None) -> None:
        """``local_ids``: the ids of ``local`` now, cheaper than its metadata (read for every item that comes and
        goes); by default taken from ``local``. ``trust``: who may get a private line (``None``: nobody)."""
        self.bus = bus
        self.port = port
        if callable(local):
            self._local = local
        else:
            fixed = tuple(local)
            self._local = lambda: fixed
        self.user_id = user_id
        self.roster = roster
        self.guests = guests if guests is not None else Guests()  # where the companions that joined are present
        # Reserved and published as the cast is at each check: a companion the user adds is this app's own from
        # the moment it is in the cast (before CastChanged is published), never a peer's for a moment longer.
        self.peers = PeerDirectory(local_ids or (lambda: [m.id for m in self._local()]), user_id)
        self._served: tuple[CompanionMetadata, ...] = ()  # what the port serves to peers
        self.person_ids = PersonIds(user_id, lambda: self.status.peer_id)
        self.rate = rate or RateLimit()
        self.order = MessageOrder()
        self.remote: dict[str, RemoteParticipant] = {}
        self.status = NetworkStatus(running=False)
        self.drops = Drops(log)
        self.payloads: collections.Counter[str] = collections.Counter()  # payloads received, per peer
        self._inbound: dict[int, BusItem] = {}  # items this link put on the bus (not to be sent back)
        self._subscription: Subscription | None = None
        self._cast_changes: Subscription | None = None  # CastChanged: this app's companions changed
        self.words = PrivateWords()  # which lines hold the user's private things
        self.outbound = Outbound(trust)
        self._asking = TaskSet("network-private")  # private lines waiting for the user's answer
        self._connected: dict[str, None] = {}  # the peers a publish reaches now

    @property
    def local(self) -> tuple[CompanionMetadata, ...]:
        """This app's companions now."""
        return tuple(self._local())

    @property
    def dropped(self) -> int:
        """How many items from the network were dropped, of every kind (``drops.counts`` has them by kind)."""
        return self.drops.total

    # -- component ------------------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._subscription is not None:
            return
        self.words.attach(self.bus)
        self._subscription = self.bus.subscribe(("messages", "states", "actions"), self._outgoing,
                                                name="network-out", direct=True)
        self._cast_changes = self.bus.subscribe("events", self._events, name="network-cast", direct=True)
        self._served = self.local
        try:
            self.status = await self.port.start(self, self._served)
        except NetworkError as err:
            self.words.close()
            self._subscription.close()
            self._subscription = None
            self._cast_changes.close()
            self._cast_changes = None
            self.status = NetworkStatus(running=False, problem=str(err))
            self._changed()
            raise
        self._changed()

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        if self._cast_changes is not None:
            self._cast_changes.close()
            self._cast_changes = None
        self.words.close()
        await self._asking.cancel_all()
        await self.port.stop()
        for peer in {p.peer for p in self.remote.values()}:
            self.gone(peer)
        self.status = NetworkStatus(running=False)

    # -- out ------------------------------------------------------------------------------------------------
    def _events(self, item: BusItem) -> None:
        if isinstance(item, CastChanged):
            self.follow_cast()

    def _outgoing(self, item: BusItem) -> None:
        if isinstance(item, Message):
            self.order.saw(item.params.id)
        if self._inbound.pop(id(item), None) is not None:
            return
        sender = getattr(getattr(item, "params", None), "from_", None)
        local = sender in self.peers.local_ids
        if isinstance(item, Message) and (local or sender == self.user_id):
            to = self.everyone() if not item.params.to and sender == self.user_id else item.params.to
            to = self.person_ids.outgoing_to(to)
            if to != item.params.to:
                item = item.model_copy(update={"params": item.params.model_copy(update={"to": to})})
            line = self.words.of_line(item.params.id) if local else None
            if line is not None:
                self._publish_private(item, line)
            else:
                self.port.publish("messages", to_json_bytes(item))
        elif isinstance(item, State) and local and self.order.of(item.params.messageId) is not None:
            # A vote on a message that passed here (not on a cue only this app's companions heard: what it noticed
            # stays on this machine, companions/conversation/speaking_first.py); the reference reads an array.
            self.port.publish("states", b"[" + to_json_bytes(item) + b"]")
        elif isinstance(item, Action) and local:
            self.port.publish("actions", to_json_bytes(item))

    def _publish_private(self, message: Message, line: PrivateLine) -> None:
        """``message`` holds the user's private things: published if every peer connected now may have it (asked in
        the window when not known), else its notice."""
        peers = [self._destination(peer) for peer in self._connected]
        known = [self.outbound.known(peer, line.kinds) for peer in peers]
        if peers and all(known):
            self.port.publish("messages", to_json_bytes(message))
        elif not peers or False in known:
            self.port.publish("messages", to_json_bytes(kept_notice(message)))
        else:
            with contextlib.suppress(RuntimeError):  # stopping: nothing leaves
                self._asking.spawn(self._ask(message, line, peers), name=f"network-private:{message.params.id}")

    async def _ask(self, message: Message, line: PrivateLine, peers: list[Source]) -> None:
        allowed = True
        for peer in peers:  # one after the other: the user answers one question at a time
            allowed = allowed and await self.outbound.may_send(peer, line.kinds, line.companion_id)
        now = {self._destination(peer).key for peer in self._connected}
        allowed = allowed and now <= {p.key for p in peers}  # a peer connected meanwhile was not asked about
        self.port.publish("messages", to_json_bytes(message if allowed else kept_notice(message)))

    def _destination(self, peer: str) -> Source:
        """A peer as a destination of private lines: named by the companions it runs here."""
        names = ", ".join(p.metadata.name for p in self.remote.values() if p.peer == peer and p.reachable)
        return Source("peer", Relation.OTHER, names, f"{GUEST_PLACE}:{peer}")

    def connected(self, peer: str) -> None:
        """A connection to ``peer`` opened (the NetworkSink)."""
        self._connected[peer] = None

    def everyone(self) -> list[str]:
        """Every companion a message to everyone names on the network: this app's, then those elsewhere that can
        be reached, within the protocol's ``to`` limit (the bounds of peers.py keep them all within it)."""
        remote = sorted(i for i, p in self.remote.items() if p.reachable and i not in self.peers.local_ids)
        return [*sorted(self.peers.local_ids), *remote][:MAX_RECIPIENTS]

    # -- this app's cast changes ----------------------------------------------------------------------------
    def follow_cast(self) -> None:
        """This app's companions changed while running (CastChanged, or the language of their names and texts):
        the port serves them as they are now and tells the peers that can hear it; a peer's companion whose id is
        now one of this app's is dropped here (refused, counted and logged, as its announcement would be at
        start): this app's own is never a peer's.

        Reserving the new ids and publishing their lines needs no call: the link reads the cast at each check. The
        roster keeps this app's companion under a taken id (the cast change put it there before it was published)."""
        local = self.local
        for companion in sorted({m.id for m in local} & set(self.remote)):
            participant = self.remote.pop(companion)
            peer = self.peers.disown(companion)
            if peer is None or not participant.reachable:
                continue  # only listed: its peer left already
            self.drops.drop("reserved", peer, "metadata", f"announced {companion!r}, which is one of this app's "
                            "companions now: its companion there is dropped")
            participant.vanish()
            self.guests.remove(companion, place=GUEST_PLACE)
        if local != self._served:
            self._served = local
            self.port.announce(local)
        self._changed()

    # -- in (the NetworkSink: called on the loop) -----------------------------------------------------------
    def received(self, peer: str, topic: str, payload: bytes) -> None:
        """A payload ``peer`` signed; whatever it holds, nothing but a drop (counted, logged) can come of a bad one."""
        self.payloads[peer] += 1
        if len(self.payloads) > 4 * MAX_PEERS:  # signers come and go: the counts of those heard first go
            del self.payloads[next(iter(self.payloads))]
        try:
            self._receive(peer, topic, payload)
        except Refused as refused:
            self.drops.drop(refused.kind, peer, topic, str(refused))
        except Exception as err:  # a bug must not let a peer's bytes take the network down: drop, and say so
            log.exception("network: a %s item from %s could not be taken", topic, peer)
            self.drops.drop("invalid", peer, topic, f"{type(err).__name__}: {err}")

    def _hear(self, peer: str) -> None:
        self._connected[peer] = None  # heard: connected (a signer of no connected peer is dropped by the adapter)
        for forgotten in self.peers.hear(peer):  # a peer that runs no companion here made room for this one
            self.rate.forget(forgotten)

    def _receive(self, peer: str, topic: str, payload: bytes) -> None:
        self._hear(peer)
        stranger = not self.peers.known(peer)
        if not self.rate.allow(peer, len(payload), stranger=stranger):
            raise Refused("flood", "over the rate of " + ("the peers that run no companion here" if stranger
                                                           else "its peer"))
        if topic not in WIRE_TOPICS:
            raise Refused("invalid", f"unknown topic {topic[:64]!r}")
        data = read_json(payload, max_bytes=MAX_PAYLOAD_BYTES)
        if topic == "states" and isinstance(data, list):
            if len(data) > MAX_STATES_PER_PAYLOAD:  # a node sends one per companion it runs
                raise Refused("too many", f"{len(data)} votes in one payload (at most {MAX_STATES_PER_PAYLOAD})")
            bodies: list[Any] = data
        else:
            bodies = [data]
        for body in bodies:
            try:
                self._admit(peer, topic, parse_body(topic, body))
            except ProtocolError as err:
                self.drops.drop("invalid", peer, topic, str(err))
            except Refused as refused:
                self.drops.drop(refused.kind, peer, topic, str(refused))

    def _admit(self, peer: str, topic: str, item: WireItem) -> None:
        if isinstance(item, (Query, QueryResult)):
            raise Refused("query", "queries are answered only for this process's companions; results are not "
                          "taken from the network")
        if isinstance(item, State):
            if item.params.from_ not in self.remote or self.remote[item.params.from_].peer != peer \
                    or not self.remote[item.params.from_].reachable:
                # A companion that votes but never announced itself (its metadata was withheld): it takes part too.
                self.peers.claim(peer, item.params.from_, announced=False)
                self._join(peer, CompanionMetadata(id=item.params.from_, name=item.params.from_))
                self._changed()
            self.peers.companion_of(peer, item.params.from_)
        elif isinstance(item, Action):
            self.peers.companion_of(peer, item.params.from_)
        elif isinstance(item, Message):
            item = self._as_said_here(peer, item)
        participant = self.remote.get(item.params.from_)
        if isinstance(item, Message):
            self.order.saw(item.params.id)
            if participant is not None:
                participant.heard_line(item)
        elif isinstance(item, State) and participant is not None:
            participant.heard_state(item)
        self._inbound[id(item)] = item
        if len(self._inbound) > 1024:
            self._inbound.pop(next(iter(self._inbound)))
        self.bus.publish(item)

    def _as_said_here(self, peer: str, message: Message) -> Message:
        """``message`` as this bus names who said it and whom it addresses (people.py): a person's ``from``
        becomes ``<name>@<peer>``, and this app's user addressed as ``<user>@<this peer>`` is the user again."""
        p = message.params
        new_person = not self.peers.person_of(peer, p.from_)
        sender = p.from_
        if self.peers.owner(p.from_) != peer and not self.rate.allow_person(peer):
            raise Refused("flood", "its people's messages come faster than people type (each opens a turn)")
        if not self.peers.speaker(peer, p.from_):
            person = self.person_ids.incoming_from(p.from_, peer)
            if person is None:
                raise Refused("invalid", f"the person {p.from_[:64]!r}'s id would be too long here")
            sender = person
            if new_person:
                self._changed()  # the window lists the people elsewhere
        to = self.person_ids.incoming_to(p.to)
        if sender == p.from_ and to == p.to:
            return message
        return message.model_copy(update={"params": p.model_copy(update={"from_": sender, "to": to})})

    def announced(self, peer: str, companions: tuple[CompanionMetadata, ...]) -> None:
        """``peer`` runs ``companions`` now: each joins here, or is known anew with its new metadata; one it
        announced before and no longer does leaves (a Madoi peer whose cast changed announces again)."""
        now = {m.id for m in companions}
        for companion in self.peers.announced_by(peer):
            if companion not in now:
                self.peers.disown(companion)
                self._leave(companion, f"no longer announced by peer {peer}")
        for metadata in companions:
            try:
                self._hear(peer)
                self.peers.claim(peer, metadata.id)
            except Refused as refused:
                self.drops.drop(refused.kind, peer, "metadata", f"announced {metadata.id[:64]!r}: {refused}")
                continue
            self._join(peer, metadata)
        self._changed()

    def _join(self, peer: str, metadata: CompanionMetadata) -> None:
        """``metadata``'s companion (claimed by ``peer``) takes part here, unless it does already."""
        known = self.remote.get(metadata.id)
        if known is not None and known.peer == peer and known.reachable:
            if known.metadata != metadata:  # its peer's card changed: its name, personality... from now on
                known.use_metadata(metadata)
                self.guests.add(metadata, place=GUEST_PLACE)
                log.info("network: %s (%s) of %s changed", metadata.id, metadata.name, peer)
            return
        participant = RemoteParticipant(metadata, peer, self.order)
        self.remote[metadata.id] = participant
        self.guests.add(metadata, place=GUEST_PLACE)
        if self.roster is not None:
            self.roster.add_participant(participant)
        log.info("network: %s (%s) joined from %s", metadata.id, metadata.name, peer)

    def _leave(self, companion: str, why: str) -> None:
        """The remote companion ``companion`` takes part here no more (its peer stays)."""
        participant = self.remote.pop(companion, None)
        if participant is None or not participant.reachable:
            return
        participant.vanish()
        self.guests.remove(companion, place=GUEST_PLACE)
        if self.roster is not None:
            self.roster.remove_participant(companion)
        log.info("network: %s left (%s)", companion, why)

    def gone(self, peer: str) -> None:
        self._connected.pop(peer, None)
        self.peers.release(peer)
        self.rate.forget(peer)
        for participant in [p for p in self.remote.values() if p.peer == peer and p.reachable]:
            participant.vanish()
            self.guests.remove(participant.id, place=GUEST_PLACE)
            if self.roster is not None:
                self.roster.remove_participant(participant.id)
            log.info("network: %s left (peer %s gone)", participant.id, peer)
        unreachable = [i for i, p in self.remote.items() if not p.reachable]
        for companion in unreachable[:max(0, len(unreachable) - MAX_UNREACHABLE_LISTED)]:
            del self.remote[companion]  # the oldest listings of companions that left go first
        self._changed()

    def listed(self) -> tuple[RemoteCompanion, ...]:
        """The companions on the network as the window lists them, by id."""
        return tuple(RemoteCompanion(p.id, p.metadata.name, p.peer, p.reachable)
                     for p in sorted(self.remote.values(), key=lambda p: p.id))

    def people(self) -> tuple[RemotePerson, ...]:
        """The people on other machines who spoke here (while their peer is known), sorted by peer and name."""
        return tuple(RemotePerson(person_id(name, peer), name, peer) for peer, name in self.peers.people())

    def _changed(self) -> None:
        self.bus.publish(NetworkChanged(self.port.status() if self.status.running else self.status, self.listed(),
                                        self.people()))
