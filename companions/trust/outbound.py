"""What leaves the machine: a line that holds something private goes out only where allowed.

A companion's turn is *private* once it holds what the camera saw, the user's files or the user's past
conversations: a tool of that capability ran in it (``vision``, ``search``, the memory tool: the worker says so at
once with :class:`PrivateTurn`, before the model writes another word), or its prompt was given recalled passages of
documents or lines of earlier conversations, or it answers what this app noticed through the camera (said when the
turn starts). The line it composes is a :class:`PrivateLine`, published just before its ``Message``.

The doors (the bridge's relay, the network link) follow both events with a :class:`PrivateWords` each and ask an
:class:`Outbound` gate before such a line, a piece of it streamed or its speech goes to anyone but this window and
the user's own bridge client. The gate asks the trust policy, per destination and per kind, for the ``share_*``
capability of the kind (``share_camera`` for a line that holds what the camera saw): a remembered *Always* sends,
a remembered *Never* keeps it here, otherwise the user is asked in the window ("Akari's line holds what your camera
saw: send it to …?", once per destination and kind when answered *Always* or *Never*; the Privacy tab forgets it).
With no one at the window the answer is no. Streamed pieces and speech are never the occasion of a question: they
go only where the line already may (no private piece leaves before the decision). A line kept here reaches those
destinations as :func:`kept_notice`: the same message id, sender and addressees, the words "(kept private)" and
``metadata.kept: "private"``, so a peer's turn-taking goes on without it.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Final, TypeVar

from companions.trust.policy import Capability, Source, TrustPolicy
from companions.wire.bus import BusItem, LocalEvent
from companions.wire.following import EventsFollower
from companions.wire.protocol import Message, MessageMetadata

PRIVATE_KINDS: Final = frozenset({Capability.CAMERA, Capability.FILES, Capability.MEMORY})
SHARE: Final[dict[Capability, Capability]] = {
    Capability.CAMERA: Capability.SHARE_CAMERA,
    Capability.FILES: Capability.SHARE_FILES,
    Capability.MEMORY: Capability.SHARE_MEMORY,
}
KEPT_TEXT: Final = "(kept private)"
KEPT_MARK: Final = "private"  # metadata.kept of a notice that stands in for a line kept here
_KEPT: Final = 512  # private turns and lines remembered (the oldest go first)
K = TypeVar("K")
V = TypeVar("V")


def private_kinds(capabilities: frozenset[Capability] | set[Capability]) -> frozenset[Capability]:
    """The private kinds among ``capabilities`` (what a tool of them brings into a turn)."""
    return frozenset(capabilities) & PRIVATE_KINDS


@dataclass(frozen=True)
class PrivateTurn(LocalEvent):
    """``companion_id``'s turn ``turn_id`` holds ``kinds`` from now on (published before anything it streams
    after)."""

    companion_id: str
    turn_id: str
    kinds: frozenset[Capability]


@dataclass(frozen=True)
class PrivateLine(LocalEvent):
    """The line ``message_id`` of ``companion_id`` holds ``kinds`` (published just before the line's ``Message``)."""

    message_id: str
    companion_id: str
    kinds: frozenset[Capability]
    text: str = ""  # its words, to know its speech by


def kept_notice(message: Message) -> Message:
    """What a destination that may not have ``message`` gets instead."""
    metadata = MessageMetadata.model_validate({"kept": KEPT_MARK})
    return message.model_copy(update={"params": message.params.model_copy(update={
        "message": KEPT_TEXT, "metadata": metadata})})


class PrivateWords(EventsFollower, name="private-words", direct=True):
    """Which turns, lines and words on the bus are private (direct: known before the item that follows them)."""

    def __init__(self) -> None:
        self._turns: collections.OrderedDict[tuple[str, str], frozenset[Capability]] = collections.OrderedDict()
        self._lines: collections.OrderedDict[str, PrivateLine] = collections.OrderedDict()
        self._texts: collections.OrderedDict[str, frozenset[Capability]] = collections.OrderedDict()

    def apply(self, item: BusItem) -> None:
        if isinstance(item, PrivateTurn):
            key = (item.companion_id, item.turn_id)
            _keep(self._turns, key, self._turns.get(key, frozenset()) | item.kinds)
        elif isinstance(item, PrivateLine):
            _keep(self._lines, item.message_id, item)
            if item.text:
                _keep(self._texts, item.text, self._texts.get(item.text, frozenset()) | item.kinds)

    def of_turn(self, companion_id: str, turn_id: str) -> frozenset[Capability]:
        """What the turn holds (what it streams from now on)."""
        return self._turns.get((companion_id, turn_id), frozenset())

    def of_line(self, message_id: str) -> PrivateLine | None:
        return self._lines.get(message_id)

    def of_speech(self, text: str, line_id: str | None) -> frozenset[Capability]:
        """What a ``speak`` query's words hold: a part of a line being composed (``line_id``: ``<turn>:<companion>``)
        or a private line said whole."""
        kinds = self._texts.get(text, frozenset())
        if line_id:
            turn, _, companion = line_id.rpartition(":")
            kinds |= self.of_turn(companion, turn)
        return kinds


def _keep(kept: collections.OrderedDict[K, V], key: K, value: V) -> None:
    kept[key] = value
    kept.move_to_end(key)
    while len(kept) > _KEPT:
        kept.popitem(last=False)


class Outbound:
    """Whether a private line may go to a destination (``policy``: the app's; ``None``: nobody to ask, kept)."""

    def __init__(self, policy: TrustPolicy | None) -> None:
        self.policy = policy

    def known(self, destination: Source, kinds: frozenset[Capability]) -> bool | None:
        """Without asking: ``True`` (allowed every kind), ``False`` (one refused, or nobody to ask) or ``None``
        (the user would be asked)."""
        if not kinds or destination.trusted:
            return True
        if self.policy is None:
            return False
        answers = [self.policy.known(destination, SHARE[kind]) for kind in sorted(kinds)]
        if any(a is not None and not a.allowed for a in answers):
            return False
        return True if all(a is not None for a in answers) else None

    async def may_send(self, destination: Source, kinds: frozenset[Capability], companion: str = "") -> bool:
        """Asks (the user in the window, or the remembered decision) for every kind; ``companion``: the id of the
        line's speaker (the question names it)."""
        if not kinds or destination.trusted:
            return True
        if self.policy is None:
            return False
        speaker = self.policy.source(companion).shown_name if companion else ""
        for kind in sorted(kinds):
            if not await self.policy.permit(destination, SHARE[kind], held_by=speaker):
                return False
        return True
