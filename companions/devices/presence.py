"""Presence: what the camera noticed about the people in front of it, as typed events on the bus.

Noticing is the user's choice (``[camera] notice``, off by default) and runs on this computer
(``app/devices/presence.py``): a few small frames a second through the camera the looks use, never a picture or a
description sent anywhere. What it noticed is one of :data:`PresenceKind`, with the frame that showed it for this
window's chat (a :class:`~companions.wire.bus.LocalEvent`: it stays on the in-process bus, no bridge client, peer or
model gets it); while it watches, :class:`PresenceWatching` says so (the status bar shows it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from companions.wire.bus import LocalEvent

PresenceKind: TypeAlias = Literal[
    "arrived",  # someone came in front of the camera (nobody was there)
    "left",  # nobody has been there for a while
    "returned",  # someone came back after being away for a while (``away_s``)
    "second_person",  # a second person joined the first
    "held_up",  # something is held up close to the camera
    "dark",  # the light went out
]


@dataclass(frozen=True)
class PresenceNoticed(LocalEvent):
    """Published on the ``events`` topic when noticing saw a change. ``at`` is when the frame that showed it was
    grabbed (wall clock, ``time.time()``); ``people`` the faces in it; ``away_s`` how long nobody was there, for
    ``returned`` (else 0).

    ``jpeg`` is that frame (``width`` x ``height``), for the chat to show on a click (``ui/chat/looks.py``), ``b""``
    when there is none; nothing else keeps it, and it never leaves this process."""

    kind: PresenceKind
    at: float
    people: int = 0
    away_s: float = 0.0
    jpeg: bytes = field(default=b"", repr=False)
    width: int = 0
    height: int = 0


@dataclass(frozen=True)
class PresenceWatching(LocalEvent):
    """Published on the ``events`` topic when noticing starts or stops watching through the camera (the setting,
    the camera switch, a camera that is missing or fails)."""

    watching: bool
