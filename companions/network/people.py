"""People on other machines: a user elsewhere gets an id of their own on this node's bus, never this app's user's.

Every Madoi calls its user ``user`` (``[general] user_name``) and the reference's clients call theirs
``user_<name>``, so the ``from`` of a person's message names them only on the machine that sent it. Here such a
message is said by ``<from>@<peer id>`` (the peer that signed it): ``user@16Uiu2HAm...`` is the user of that
machine, distinct from this app's user and from every other machine's, and no peer can speak under another peer's
ids because the peer id comes from the signature, not from the message.

The same id stands for that person on every node except their own, so it travels as it is in a ``to``: a node
sends its own user in a ``to`` as ``<user>@<its peer id>`` (:meth:`PersonIds.outgoing_to`: a companion's line
addresses "the user", who is someone else on every other machine), and reads that form as its own user again
(:meth:`PersonIds.incoming_to`); a person's own ``from`` goes out as their plain name, as the reference expects,
and the signature says where it came from. Turns are keyed by message ids, which no node changes, so every node
takes the same turns; only who a line is shown as coming from differs, as it should.

An id holding ``@`` is never a companion, and never a person a peer may speak as (a peer speaks only as itself).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

SEPARATOR: Final = "@"
MAX_ID_CHARS: Final = 256  # the protocol's longest id (companions/wire/protocol.py NonEmpty)


@dataclass(frozen=True)
class RemotePerson:
    """Someone who speaks on another machine (its user, or a user of a reference firehose there)."""

    id: str  # on this node's bus: ``<name>@<peer>``
    name: str  # as that machine calls them
    peer: str

    @property
    def place(self) -> str:
        """The peer, shortened as the window shows it (``16Uiu2H…a1b2c3``)."""
        return short_peer(self.peer)

    @property
    def shown(self) -> str:
        """How the window names them: ``user · 16Uiu2H…a1b2c3`` (their name there, and the machine)."""
        return f"{self.name} · {self.place}"


def short_peer(peer: str) -> str:
    return f"{peer[:6]}…{peer[-6:]}" if len(peer) > 14 else peer


def person_id(name: str, peer: str) -> str:
    return f"{name}{SEPARATOR}{peer}"


def remote_person(person: str) -> RemotePerson | None:
    """The person a ``<name>@<peer>`` id names, or ``None`` for any other id."""
    name, sep, peer = person.rpartition(SEPARATOR)
    if not sep or not name or not peer:
        return None
    return RemotePerson(person, name, peer)


def looks_like_a_user(name: str) -> bool:
    """``user`` or ``user_<name>``: how Madoi and the reference's clients name people; never a companion's id."""
    return name == "user" or name.startswith("user_")


class PersonIds:
    """How the ids of people are translated between the wire and this node's bus."""

    def __init__(self, user_id: str, own_peer: Callable[[], str]) -> None:
        self.user_id = user_id
        self.own_peer = own_peer

    @property
    def user_elsewhere(self) -> str:
        """This app's user as every other node names them: ``<user>@<this peer>``."""
        return person_id(self.user_id, self.own_peer())

    def incoming_from(self, name: str, peer: str) -> str | None:
        """The id on this bus of the person ``name`` who speaks on ``peer`` (``None``: too long to be one)."""
        person = person_id(name, peer)
        return person if len(person) <= MAX_ID_CHARS else None

    def incoming_to(self, to: Sequence[str]) -> list[str]:
        """A ``to`` list from the network as this bus names them: this app's user, addressed as the person they are
        elsewhere, is the user again; every other id stays as it is (companions, and people elsewhere already in
        their ``<name>@<peer>`` form; a reference node addresses its own people by their plain names)."""
        elsewhere = self.user_elsewhere
        return list(dict.fromkeys(self.user_id if who == elsewhere else who for who in to))

    def outgoing_to(self, to: Sequence[str]) -> list[str]:
        """A ``to`` list as it leaves for the network: this app's user is named as every other node knows them
        (a line here answers "the user", which on another machine is someone else)."""
        return [self.user_elsewhere if who == self.user_id else who for who in to]
