"""Guests: the companions present from elsewhere (a bridge client's, a peer's on the network).

:class:`Guests` is the one registry of them. Each adapter adds a guest when it joins and removes it when it leaves
(app/bridge/bridge_guests.py when a client announces its companion and when it disconnects; companions/network/link.py
when a peer announces its companions and when the peer is gone); the cast reads it for who is present (every local
companion's prompt names the guests) and for their names. A bridge that moves to another port, or a network that
stops, removes its own guests: nothing stacks.

The window lists the bridge's guests from :class:`BridgeGuestsChanged` (the network's come with ``NetworkChanged``,
companions/network/link.py), as long as their client stays connected.
"""

from __future__ import annotations

from dataclasses import dataclass

from companions.wire.bus import LocalEvent
from companions.wire.protocol import CompanionMetadata


@dataclass(frozen=True)
class RemoteCompanion:
    """A companion running elsewhere, as the window lists it (``peer``: its peer's id, or its bridge connection)."""

    id: str
    name: str
    peer: str
    reachable: bool


@dataclass(frozen=True)
class BridgeGuestsChanged(LocalEvent):
    """The companions connected through the bridge now (``peer``: the connection, e.g. ``bridge:3``)."""

    guests: tuple[RemoteCompanion, ...]


class Guests:
    """The companions present from elsewhere, by id, in the order they joined; ``place`` says which adapter added
    each (``bridge``, ``network``), so that one removes only its own."""

    def __init__(self) -> None:
        self._present: dict[str, tuple[str, CompanionMetadata]] = {}

    def add(self, metadata: CompanionMetadata, *, place: str) -> None:
        """``metadata``'s companion joined through ``place`` (a companion joining again is listed once, as now)."""
        self._present.pop(metadata.id, None)
        self._present[metadata.id] = (place, metadata)

    def remove(self, companion_id: str, *, place: str) -> None:
        """The companion left ``place`` (nothing happens when another place has it now, or nobody)."""
        present = self._present.get(companion_id)
        if present is not None and present[0] == place:
            del self._present[companion_id]

    def metadata(self) -> list[CompanionMetadata]:
        """Every guest present, in the order they joined."""
        return [metadata for _place, metadata in self._present.values()]

    def name_of(self, companion_id: str) -> str | None:
        present = self._present.get(companion_id)
        return present[1].name if present is not None else None

    def __contains__(self, companion_id: object) -> bool:
        return companion_id in self._present

    def __len__(self) -> int:
        return len(self._present)
