"""Companions that join through the bridge: a client announces one, and it takes part in the conversation.

A client announces its companion's metadata, the object a reference companion sends on ``/aikyo/metadata/1.0.0``
(``{id, name, personality, story, sample}``), in its hello (``{"topic": "hello", "body": {"metadata": {...}}}``,
Madoi's dialect) or, in any dialect, as a frame of its own: ``{"topic": "metadata", "body": {...}}`` (answered
``{"topic": "metadata", "body": {"ok": true, "id": ...}}``). One companion per connection, as one per peer in the
reference. From then on, for as long as the connection lasts, the companion is a participant of the conversation,
the same :class:`~companions.network.remote.RemoteParticipant` as a companion on the network:

* it votes by publishing its State for the turn's message (``messageId``) on ``states``, a body or an array of
  bodies as the reference's companions publish them, within the same deadline as this app's companions: this app
  judges its vote (unlike a network companion's, which its own node judges), and the manager publishes the vote
  it counted (``listen`` when it came late) as it does for its own companions;
* it learns that it holds the floor from the ``turn.phase`` frames it gets (``phase: "composing"``,
  ``speaker``: its id; topic ``turns``, in every dialect), and speaks by publishing its line (``message.send``);
  that message continues the conversation (the next turn opens on it);
* its ``from`` must be its own id: such a connection never speaks as another companion, as the user or a
  ``user_<name>``; its own ``vision`` and ``speak`` queries go to the query broker, where the app's camera and
  voice answer them only once the user allowed this companion (companions/trust/policy.py: asked in the window);
* when it disconnects, its pending vote counts as missing at once and it leaves the roster.

An id that is taken (a local companion's, the network's, another client's companion or identity, a user's) or
metadata that is not valid is refused with an error frame and a log line; the connection lives on.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.bridge.auth import Identity
from app.bridge.client import ClientSession
from app.bridge.errors import ErrorCode, FrameRejected
from app.bridge.senders import USER_ID, is_stamped
from companions.companion.guests import BridgeGuestsChanged, Guests, RemoteCompanion
from companions.conversation.participant import ParticipantRoster
from companions.network.remote import MessageOrder, RemoteParticipant
from companions.wire.bus import Bus, BusItem
from companions.wire.protocol import (
    Action,
    CompanionMetadata,
    Message,
    ProtocolError,
    Query,
    State,
    WireItem,
    parse_body,
)

log = logging.getLogger(__name__)

METADATA_TOPIC: Final = "metadata"
GUEST_PLACE: Final = "bridge"  # the place of the companions the bridge adds to the guests
MAX_STATES_PER_FRAME: Final = 32


class Announcement(BaseModel):
    """A companion's metadata as a client announces it (strict: unknown keys are refused, lengths bounded)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Identity
    name: Annotated[str, Field(min_length=1, max_length=64, pattern=r"\S")]
    personality: Annotated[str, Field(max_length=4000)] = ""
    story: Annotated[str, Field(max_length=4000)] = ""
    sample: Annotated[str, Field(max_length=1000)] = ""


def announcement_of(body: Any) -> CompanionMetadata:
    """The metadata in a ``metadata`` frame's (or a hello's) body.

    Raises:
        FrameRejected: not a valid metadata object (the message says which field and why).
    """
    try:
        valid = Announcement.model_validate(body)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"invalid metadata: {where}: {first['msg']}") from None
    return CompanionMetadata(id=valid.id, name=valid.name, personality=valid.personality, story=valid.story,
                             sample=valid.sample)


def guest_states(data: Any) -> list[WireItem] | None:
    """The votes of a ``{"topic": "states", "body": [...]}`` frame (the reference's array), ``None`` for others.

    Raises:
        FrameRejected: an invalid state in the array, or too many.
    """
    if not (isinstance(data, dict) and data.get("topic") == "states" and isinstance(data.get("body"), list)):
        return None
    bodies = data["body"]
    if len(bodies) > MAX_STATES_PER_FRAME:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"at most {MAX_STATES_PER_FRAME} states in one frame")
    try:
        return [parse_body("states", body) for body in bodies]
    except ProtocolError as err:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, str(err)) from None


class GuestParticipant(RemoteParticipant):
    """A network companion's participant whose votes this app judges: its client has no node of its own that would
    publish its counted vote, so the manager holds it to the same deadline as the app's own companions."""

    def __init__(self, metadata: CompanionMetadata, client: str, order: MessageOrder) -> None:
        super().__init__(metadata, client, order)
        self.description = dataclasses.replace(self.description, remote=False)


class BridgeGuests:
    """The companions of the connected clients, each a participant of ``roster`` while its client is connected."""

    def __init__(self, bus: Bus, roster: ParticipantRoster | None, present: Guests, *, user_name: str) -> None:
        self._bus = bus
        self._roster = roster
        self._present = present  # the cast's guests: where the local companions see who is present
        self._user_name = user_name
        self.order = MessageOrder()  # every message on the bus, so a guest's line is known to follow a turn's
        self._guests: dict[str, GuestParticipant] = {}  # companion id -> participant (peer: the client key)

    def ids(self) -> set[str]:
        """The companions that take part: the guests, and every participant (from the network too)."""
        return {*self._guests, *(self._roster.present if self._roster is not None else ())}

    def saw(self, item: BusItem) -> None:
        """Every item on the bus (the relay's direct subscription): the order of messages."""
        if isinstance(item, Message):
            self.order.saw(item.params.id)

    def announce(self, client: ClientSession, body: Any, *, taken: Iterable[str]) -> CompanionMetadata:
        """``client`` speaks for the companion ``body`` describes from now on.

        Raises:
            FrameRejected: invalid metadata, a taken id, no conversation to take part in, or a second companion.
        """
        metadata = announcement_of(body)
        if client.guest is not None:
            if client.guest == metadata.id:
                return self._guests[metadata.id].metadata  # said again: nothing changes
            raise FrameRejected(ErrorCode.FORBIDDEN, f"this connection already speaks for {client.guest!r}: "
                                "one companion per connection")
        if self._roster is None:
            raise FrameRejected(ErrorCode.FORBIDDEN, "no conversation here takes companions from clients")
        if (metadata.id in set(taken) or metadata.id in self.ids() or metadata.id == self._user_name
                or USER_ID.match(metadata.id) or is_stamped(metadata.id)):
            raise FrameRejected(ErrorCode.FORBIDDEN, f"companion id {metadata.id!r} is taken (a companion, a "
                                "client or a user has it): announce another id")
        participant = GuestParticipant(metadata, client.key, self.order)
        self._guests[metadata.id] = participant
        client.guest = metadata.id
        client.turns = True  # it learns that it holds the floor from the turn phases
        self._present.add(metadata, place=GUEST_PLACE)
        self._roster.add_participant(participant)
        log.info("bridge: companion %s (%s) joined through %s", metadata.id, metadata.name, client.key)
        self._changed()
        return metadata

    def take(self, client: ClientSession, item: Message | State | Action | Query) -> bool:
        """An item from a guest's client, checked against its companion and heard by its participant; ``True``
        when the caller is to put it on the bus (a gesture, a query: the broker asks the user), ``False`` when it is
        there already (a line) or never goes there as it is (a vote: the manager publishes the vote it counted).

        Raises:
            FrameRejected: a ``from`` that is not its companion.
        """
        companion = client.guest
        participant = self._guests.get(companion or "")
        if participant is None or companion is None:
            raise FrameRejected(ErrorCode.INTERNAL_ERROR, "not a companion's connection")
        sender = item.params.from_
        if sender != companion:
            raise FrameRejected(ErrorCode.FORBIDDEN, f"forged from {sender!r}: this connection speaks only as "
                                f"its companion {companion!r}")
        if isinstance(item, State):
            participant.heard_state(item)
            return False
        if isinstance(item, Message):
            # On the bus first: the companions here hear the line (their memory) before the turn it ends goes on.
            self._bus.publish(item)
            participant.heard_line(item)
            return False
        return True

    def left(self, client: ClientSession) -> None:
        """The client disconnected: its companion's pending vote and line fail at once, and it leaves."""
        participant = self._guests.pop(client.guest or "", None)
        if participant is None:
            return
        participant.vanish()
        self._present.remove(participant.id, place=GUEST_PLACE)
        if self._roster is not None:
            self._roster.remove_participant(participant.id)
        log.info("bridge: companion %s left (%s disconnected)", participant.id, client.key)
        self._changed()

    def listed(self) -> tuple[RemoteCompanion, ...]:
        """The guests as the window lists them (``peer``: the client's connection)."""
        return tuple(RemoteCompanion(p.id, p.metadata.name, p.peer, True)
                     for p in sorted(self._guests.values(), key=lambda p: p.id))

    def _changed(self) -> None:
        self._bus.publish(BridgeGuestsChanged(self.listed()))
