"""Microphone audio as the core sees it: 16 kHz mono 16-bit frames of 20 ms, the microphone port, and levels.

Every adapter delivers this one format (a sound card is asked for it; a file is converted), so the detector, the
echo guard and the recognizers never convert anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np

SAMPLE_RATE: Final = 16_000
FRAME_SAMPLES: Final = 320  # 20 ms: a frame size the WebRTC detector takes at 16 kHz
FRAME_BYTES: Final = FRAME_SAMPLES * 2
FRAME_S: Final = FRAME_SAMPLES / SAMPLE_RATE
SILENT_DBFS: Final = -100.0


@dataclass(frozen=True, eq=False)
class AudioFrame:
    """20 ms of the microphone: ``pcm`` is 320 little-endian int16 samples, ``at`` the ``time.monotonic()`` of its
    first sample (when the device captured it, as near as the adapter knows)."""

    pcm: bytes
    at: float

    @property
    def end(self) -> float:
        return self.at + FRAME_S

    @property
    def level(self) -> float:
        return level_dbfs(self.pcm)


def power(pcm: bytes) -> float:
    """Mean square of the samples, in full-scale units (1.0: a full-scale square wave)."""
    if not pcm:
        return 0.0
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
    return float(np.mean(samples * samples))


def level_dbfs(pcm: bytes) -> float:
    """The RMS level in dB relative to full scale (-100 for silence)."""
    p = power(pcm)
    return 10.0 * math.log10(p) if p > 1e-10 else SILENT_DBFS


class MicrophoneUnavailable(Exception):
    """No microphone can be opened now; ``str(err)`` is the reason as the user should read it."""


class Microphone(Protocol):
    """A source of :class:`AudioFrame` s, open only while the user has voice input on."""

    @property
    def source(self) -> str:
        """What is listened to, in words (a device's name, a file's path)."""
        ...

    async def open(self, deliver: Callable[[AudioFrame], None]) -> None:
        """Starts capturing: ``deliver`` is called for every frame, in order, from the adapter's own thread.
        Raises :class:`MicrophoneUnavailable` with the reason."""
        ...

    async def close(self) -> None:
        """Stops capturing (no frame is delivered after it returns); safe to call when not open."""
        ...
