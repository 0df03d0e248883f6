"""Companions that take part through the bridge (app/bridge/guests.py): what the window lists of them.

The network's companions come with ``NetworkChanged`` (companions/network/link.py); a bridge client that announced
a companion is listed from this event, as long as it stays connected.
"""

from __future__ import annotations

from dataclasses import dataclass

from companions.bus import LocalEvent
from companions.network.link import RemoteCompanion


@dataclass(frozen=True)
class BridgeGuestsChanged(LocalEvent):
    """The companions connected through the bridge now (``peer``: the connection, e.g. ``bridge:3``)."""

    guests: tuple[RemoteCompanion, ...]
