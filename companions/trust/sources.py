"""Who is asking: the :class:`~companions.trust.policy.Source` behind an id (``from``), for the trust policy.

This app's user and companions are known by id; the companions elsewhere are learnt from the events that list
them (``NetworkChanged`` for the network's, ``BridgeGuestsChanged`` for the bridge's), with where they are. Any
other id is ``OTHER``: a bridge client's ``user_<name>``, a user on another machine, an id nobody announced.
The ids are trustworthy because the bridge and the network see to it: a client or a peer can never speak as this
app's user or companions, nor as another's companion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from companions.companion.guests import BridgeGuestsChanged, RemoteCompanion
from companions.network.link import NetworkChanged
from companions.network.people import remote_person
from companions.trust.policy import NOTICED, Relation, Source
from companions.wire.bus import BusItem
from companions.wire.following import EventsFollower

BRIDGE_PLACE = "bridge"
NETWORK_PLACE = "network"
CLIENT_PREFIX = "client:"


def bridge_stranger(sender: str) -> Source | None:
    """A bridge client that is not the user's own, where it spoke as the user (the bridge published its words under
    this id: app/bridge/senders.py): a web page by its origin (``http://localhost:5173``), another client by its
    address (``client:127.0.0.2``); the same source as where a private line would go to it. ``None`` for other ids."""
    if "://" in sender:
        return Source(sender, Relation.OTHER, sender, BRIDGE_PLACE)
    if sender.startswith(CLIENT_PREFIX):
        return Source(sender, Relation.OTHER, sender.removeprefix(CLIENT_PREFIX), BRIDGE_PLACE)
    return None


class SourceDirectory(EventsFollower, name="trust-sources", direct=True):
    """Tells who an id is. ``own`` returns this app's companions' ids (the cast may change while it runs).

    :meth:`attach` it to the bus to follow the companions elsewhere (direct: they are known before anything they
    publish is read)."""

    def __init__(self, *, user_id: str, own: Callable[[], Iterable[str]],
                 names: Callable[[str], str | None] = lambda _id: None) -> None:
        self.user_id = user_id
        self.own = own  # this app's companions' ids, asked each time (the cast may change)
        self.names = names  # the name of an id as the window shows it (the cast's and the user's)
        self._network: dict[str, Source] = {}
        self._bridge: dict[str, Source] = {}

    def apply(self, item: BusItem) -> None:
        if isinstance(item, NetworkChanged):
            self._network = {c.id: _guest(c, f"{NETWORK_PLACE}:{c.peer}") for c in item.remote}
        elif isinstance(item, BridgeGuestsChanged):
            self._bridge = {c.id: _guest(c, BRIDGE_PLACE) for c in item.guests}

    def source(self, sender: str) -> Source:
        """Who ``sender`` is now."""
        if sender == self.user_id:
            return Source(sender, Relation.USER, self.names(sender) or "")
        if sender in set(self.own()):
            return Source(sender, Relation.OWN, self.names(sender) or "")
        if sender == NOTICED.id:
            return NOTICED
        guest = self._bridge.get(sender) or self._network.get(sender)
        if guest is not None:
            return guest
        person = remote_person(sender)  # a user on another machine: <name>@<peer> (companions/network/people.py)
        if person is not None:
            return Source(sender, Relation.OTHER, person.name, f"{NETWORK_PLACE}:{person.peer}")
        stranger = bridge_stranger(sender)  # a page or another client that spoke as the user
        if stranger is not None:
            return stranger
        return Source(sender, Relation.OTHER, self.names(sender) or "")

    def guests(self) -> list[Source]:
        """The companions elsewhere known now (for the settings: who may be asked about)."""
        return [*self._bridge.values(), *self._network.values()]


def _guest(companion: RemoteCompanion, place: str) -> Source:
    return Source(companion.id, Relation.GUEST, companion.name, place)
