"""Device ports: the camera and the speaker as the core sees them, plus their small value types (what they give back,
:class:`~companions.devices.query_bodies.SpeakResult` and :class:`~companions.devices.query_bodies.VisionDescription`,
is what a ``speak`` or ``vision`` answer carries: typed once, in query_bodies.py).

Adapters live in ``app/devices`` (OpenCV, pyttsx3); tests swap them for fakes. Nothing here touches a device.
A device that is missing or fails is a value (:class:`DeviceStatus`, :class:`DeviceUnavailable`), never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from companions.devices.query_bodies import SpeakResult, VisionDescription
from companions.wire.bus import LocalEvent
from companions.wire.protocol import Emotion

DeviceKind: TypeAlias = Literal["camera", "speaker"]


@dataclass(frozen=True)
class DeviceStatus(LocalEvent):
    """Published on the ``events`` topic whenever a device becomes (un)available; the UI shows ``reason``.

    ``reason`` reads as the user should see it: ``"no camera: cannot open '0'"``, ``"no audio device: ..."``.
    """

    device: DeviceKind
    available: bool
    reason: str = ""
    source: str = ""


@dataclass(frozen=True)
class SpeakingChanged(LocalEvent):
    """Published on the ``events`` topic when a companion starts or stops speaking aloud (for the UI)."""

    speaker_id: str
    speaking: bool


@dataclass(frozen=True)
class CameraInUse(LocalEvent):
    """Published on the ``events`` topic when the camera device is opened (a webcam's light goes on) or closed.

    The device is open only while its preview is on screen or someone is looking (``app/devices/camera.py``)."""

    in_use: bool


@dataclass(frozen=True, eq=False)
class CameraLooked(LocalEvent):
    """Published on the ``events`` topic for every look through the camera, so the window can show it: who looked
    (a companion's id, or the user's for a picture the user showed them), when, and what was seen.

    ``jpeg`` is the picture itself (``b""`` when nothing was seen); nothing else keeps it, so a view that shows
    looks decides how many pictures it keeps. ``refused`` says why nothing was seen (the user switched the camera
    off), else ``""``."""

    looker: str
    at: float  # wall-clock seconds (time.time()): when the frame was grabbed, or the refusal
    jpeg: bytes = b""
    width: int = 0
    height: int = 0
    description: str = ""  # the on-device description's sentence, when one was made
    refused: str = ""


class DeviceUnavailable(Exception):
    """The device cannot serve the request now; ``str(err)`` is the user-facing reason."""


@dataclass(frozen=True)
class CameraFrame:
    """One captured frame, already encoded for the wire."""

    jpeg: bytes
    width: int
    height: int
    timestamp: float  # wall-clock seconds (time.time()) when the frame was grabbed
    description: VisionDescription | None = None  # the on-device description, when asked for


class Camera(Protocol):
    """A source of frames, opened while it is used (a preview on screen, a look) and closed otherwise."""

    @property
    def status(self) -> DeviceStatus: ...

    async def capture(self, *, describe: bool = False, looker: str = "") -> CameraFrame:
        """The latest frame (at most one frame period old; the device is opened for it when it was closed);
        raises :class:`DeviceUnavailable` with the reason. ``looker`` (a companion's id) is who looks: every look
        is published as a :class:`CameraLooked`."""
        ...


@dataclass(frozen=True)
class Utterance:
    """Something to say. ``voice`` is an engine voice id or a language ("ja", "en"); None picks by the text."""

    text: str
    emotion: Emotion = "neutral"
    voice: str | None = None
    speaker_id: str = ""  # the companion speaking, for logs and per-companion voices
    rate: int | None = None  # words per minute before the emotion's factor (a card's voice.rate); None: settings


class Speaker(Protocol):
    """Speaks utterances one at a time, in order."""

    @property
    def status(self) -> DeviceStatus: ...

    async def speak(self, utterance: Utterance) -> SpeakResult:
        """Returns when the utterance has finished, was interrupted, skipped or failed; never raises for those."""
        ...

    def interrupt(self) -> None:
        """Stops the current utterance and drops the queued ones (their results say interrupted)."""
        ...


@dataclass
class VoiceMap:
    """Which voice each companion speaks with (from its card); unknown companions get the engine's choice."""

    by_companion: dict[str, str] = field(default_factory=dict)

    def voice_for(self, companion_id: str) -> str | None:
        return self.by_companion.get(companion_id)
