"""The network link: joins the in-process bus to the reference's peer-to-peer network through a NetworkPort.

Out: what this process's companions and user say (messages, votes, actions) goes to the network as the reference
puts it there: the bare JSON-RPC object on its topic, votes as an array of states. A user's message to everyone
(an empty ``to``) is sent addressed to every companion known, so that reference nodes (which answer only messages
naming them) take part.

In: everything is untrusted. A payload is dropped, with a log line, when it is oversized, comes in a flood (a token
bucket per peer), is not JSON, is not a valid item of its topic, is a query or a query result (this process's
devices answer only its own companions), or its ``from`` does not belong to the signing peer (peers.py). What is
left goes on the bus as if said here, and a remote companion's votes and lines also reach its
:class:`~companions.network.remote.RemoteParticipant`, so it takes part in this process's turn-taking as an equal.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from companions.bus import Bus, BusItem, LocalEvent, Subscription
from companions.conversation.participant import Participant
from companions.network.peers import PeerDirectory, RateLimit
from companions.network.port import MAX_PAYLOAD_BYTES, NetworkError, NetworkPort, NetworkStatus
from companions.network.remote import MessageOrder, RemoteParticipant
from companions.protocol import (
    Action,
    CompanionMetadata,
    Message,
    ProtocolError,
    Query,
    State,
    WireItem,
    parse_body,
    sender_of,
    to_json_bytes,
)

log = logging.getLogger(__name__)
MAX_STATES_PER_PAYLOAD: Final = 32


class Roster(Protocol):
    """Where remote companions join and leave the conversation (the ConversationManager)."""

    def add_participant(self, participant: Participant) -> None: ...

    def remove_participant(self, companion: str) -> None: ...


@dataclass(frozen=True)
class RemoteCompanion:
    """A companion running elsewhere, as the window lists it."""

    id: str
    name: str
    peer: str
    reachable: bool


@dataclass(frozen=True)
class NetworkChanged(LocalEvent):
    """The network's state for views: this process's status and the remote companions seen (reachable or not)."""

    status: NetworkStatus
    remote: tuple[RemoteCompanion, ...]


class NetworkLink:
    """A runtime component (start/stop): the bus on one side, a :class:`NetworkPort` on the other."""

    name = "network"

    def __init__(self, bus: Bus, port: NetworkPort, *, local: Sequence[CompanionMetadata], user_id: str,
                 roster: Roster | None = None, rate: RateLimit | None = None) -> None:
        self.bus = bus
        self.port = port
        self.local = tuple(local)
        self.user_id = user_id
        self.roster = roster
        self.peers = PeerDirectory(m.id for m in self.local)
        self.rate = rate or RateLimit()
        self.order = MessageOrder()
        self.remote: dict[str, RemoteParticipant] = {}
        self.status = NetworkStatus(running=False)
        self.dropped = 0
        self._inbound: dict[int, BusItem] = {}  # items this link put on the bus (not to be sent back)
        self._subscription: Subscription | None = None
        self._flooding: set[str] = set()

    # -- component ------------------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._subscription is not None:
            return
        self._subscription = self.bus.subscribe(("messages", "states", "actions"), self._outgoing,
                                                name="network-out", direct=True)
        try:
            self.status = await self.port.start(self, self.local)
        except NetworkError as err:
            self._subscription.close()
            self._subscription = None
            self.status = NetworkStatus(running=False, problem=str(err))
            self._changed()
            raise
        self._changed()

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        await self.port.stop()
        for peer in {p.peer for p in self.remote.values()}:
            self.gone(peer)
        self.status = NetworkStatus(running=False)

    # -- out ------------------------------------------------------------------------------------------------
    def _outgoing(self, item: BusItem) -> None:
        if isinstance(item, Message):
            self.order.saw(item.params.id)
        if self._inbound.pop(id(item), None) is not None:
            return
        sender = getattr(getattr(item, "params", None), "from_", None)
        local = sender in self.peers.local_ids
        if isinstance(item, Message) and (local or sender == self.user_id):
            if not item.params.to and sender == self.user_id:
                everyone = sorted({*self.peers.local_ids, *(i for i, p in self.remote.items() if p.reachable)})
                item = item.model_copy(update={"params": item.params.model_copy(update={"to": everyone})})
            self.port.publish("messages", to_json_bytes(item))
        elif isinstance(item, State) and local:
            self.port.publish("states", b"[" + to_json_bytes(item) + b"]")  # the reference reads an array
        elif isinstance(item, Action) and local:
            self.port.publish("actions", to_json_bytes(item))

    # -- in (the NetworkSink: called on the loop) -----------------------------------------------------------
    def received(self, peer: str, topic: str, payload: bytes) -> None:
        if not self.rate.allow(peer):
            self._drop(peer, topic, "flood", once=peer not in self._flooding)
            self._flooding.add(peer)
            return
        self._flooding.discard(peer)
        if len(payload) > MAX_PAYLOAD_BYTES:
            self._drop(peer, topic, f"{len(payload)} bytes")
            return
        try:
            data = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            self._drop(peer, topic, "not JSON")
            return
        bodies: Iterable[Any] = data[:MAX_STATES_PER_PAYLOAD] if topic == "states" and isinstance(data, list) \
            else (data,)
        for body in bodies:
            try:
                item = parse_body(topic, body)
            except ProtocolError as err:
                self._drop(peer, topic, str(err))
                continue
            self._admit(peer, topic, item)

    def _admit(self, peer: str, topic: str, item: WireItem) -> None:
        if isinstance(item, Query):
            self._drop(peer, topic, "queries are answered only for this process's companions")
            return
        refused = self.peers.admit(peer, item)
        if refused is not None:
            self._drop(peer, topic, refused)
            return
        if isinstance(item, State) and item.params.from_ not in self.remote:
            # A companion that votes but never announced itself (its metadata was withheld): it takes part too.
            self.announced(peer, (CompanionMetadata(id=item.params.from_, name=item.params.from_),))
        participant = self.remote.get(sender_of(item) or "")
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

    def announced(self, peer: str, companions: tuple[CompanionMetadata, ...]) -> None:
        for metadata in companions:
            refused = self.peers.claim(peer, metadata.id)
            if refused is not None:
                log.warning("network: peer %s announced %s: refused (%s)", peer, metadata.id, refused)
                continue
            known = self.remote.get(metadata.id)
            if known is not None and known.peer == peer and known.reachable:
                continue
            participant = RemoteParticipant(metadata, peer, self.order)
            self.remote[metadata.id] = participant
            if self.roster is not None:
                self.roster.add_participant(participant)
            log.info("network: %s (%s) joined from %s", metadata.id, metadata.name, peer)
        self._changed()

    def gone(self, peer: str) -> None:
        self.peers.release(peer)
        self.rate.forget(peer)
        for participant in [p for p in self.remote.values() if p.peer == peer and p.reachable]:
            participant.vanish()
            if self.roster is not None:
                self.roster.remove_participant(participant.id)
            log.info("network: %s left (peer %s gone)", participant.id, peer)
        self._changed()

    def _drop(self, peer: str, topic: str, why: str, *, once: bool = True) -> None:
        self.dropped += 1
        if once:
            log.warning("network: dropped a %s item from %s: %s", topic, peer, why[:300])

    def listed(self) -> tuple[RemoteCompanion, ...]:
        """The companions on the network as the window lists them, by id."""
        return tuple(RemoteCompanion(p.id, p.metadata.name, p.peer, p.reachable)
                     for p in sorted(self.remote.values(), key=lambda p: p.id))

    def _changed(self) -> None:
        self.bus.publish(NetworkChanged(self.port.status() if self.status.running else self.status, self.listed()))
