"""Is it the user, or the companions' own voice coming back through the speakers?

A companion that hears itself interrupts itself (GLaDOS #38, #86; Open-LLM-VTuber #12). Two ways out, chosen in the
settings (``echo``):

- ``pause``: nothing the microphone hears counts while the companions' voice plays. Safe with any speakers, but the
  user can then cut them off only with the push-to-talk key or button, not by voice.
- ``guard`` (the default): the app knows what it plays (the speaker hands each sentence's audio over as it starts
  playing), so for every microphone frame it knows how loud the companions' voice was over the last
  ``ECHO_WINDOW_S`` (the way back through the room: delay and reverberation). The echo's level against what is
  played (the *coupling*, fixed by the speakers' volume, the room and the microphone) is learned from the frames
  taken for echo; a frame counts as the user's only when it is louder than the echo expected by ``margin_db``.
  A voice over the companions' passes; their own voice, however loud, does not.

When the learned coupling is so strong that the user's voice could hardly stand out (the microphone sits next to
loud speakers), :attr:`EchoGuard.headset_advised` says so and the window suggests a headset.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np

from companions.voice_input.audio import FRAME_BYTES, FRAME_S, AudioFrame, power

EchoHandling: TypeAlias = Literal["guard", "pause"]

ECHO_WINDOW_S: Final = 0.3  # how far back a played sound may still come out of the room
PRIOR_COUPLING_DB: Final = 0.0  # until learned: the echo as loud as what is played (loud speakers by the mic)
LEARNED_AFTER: Final = 15  # echo frames (300 ms of the companions' voice) before the learned coupling is used
HEADSET_ABOVE_DB: Final = -3.0  # a coupling above this: the user's voice barely stands out; advise a headset
QUIET_REFERENCE: Final = 1e-6  # played audio quieter than -60 dBFS makes no echo worth guarding against


@dataclass
class _Playback:
    energies: np.ndarray  # per 20 ms frame of what is played (power)
    at: float  # monotonic time its first sample is played
    end: float


class EchoGuard:
    """Judges microphone frames against what the speaker plays (:meth:`play`). Used from the loop only."""

    def __init__(self, handling: EchoHandling = "guard", margin_db: float = 8.0) -> None:
        self.handling: EchoHandling = handling
        self.margin_db = margin_db
        self._playbacks: deque[_Playback] = deque()
        self._ratios: deque[float] = deque(maxlen=200)
        self.suppressed = 0  # frames not taken for the user's because of the companions' voice

    def play(self, pcm: bytes, at: float) -> None:
        """The speaker starts playing ``pcm`` (16 kHz mono int16) at ``at`` (monotonic)."""
        frames = len(pcm) // FRAME_BYTES
        if frames == 0:
            return
        samples = np.frombuffer(pcm[: frames * FRAME_BYTES], dtype="<i2").astype(np.float32) / 32768.0
        energies = np.mean(samples.reshape(frames, -1) ** 2, axis=1)
        self._playbacks.append(_Playback(energies, at, at + frames * FRAME_S))

    def stopped(self, at: float) -> None:
        """Playback was cut off at ``at``: what was queued to play after it never will."""
        for playback in self._playbacks:
            if playback.end > at:
                keep = max(0, math.ceil((at - playback.at) / FRAME_S))
                playback.energies = playback.energies[:keep]
                playback.end = playback.at + keep * FRAME_S

    def playing(self, at: float) -> bool:
        """The companions' voice may be in the microphone at ``at`` (it plays, or just did)."""
        self._forget(at)
        return any(p.at <= at < p.end + ECHO_WINDOW_S for p in self._playbacks)

    @property
    def coupling_db(self) -> float:
        """The echo's level against what is played, as learned (the prior until enough echo was heard)."""
        if len(self._ratios) < LEARNED_AFTER:
            return PRIOR_COUPLING_DB
        return float(np.percentile(np.fromiter(self._ratios, dtype=np.float64), 90))

    @property
    def learned(self) -> bool:
        return len(self._ratios) >= LEARNED_AFTER

    @property
    def headset_advised(self) -> bool:
        return self.learned and self.coupling_db > HEADSET_ABOVE_DB

    def allows(self, frame: AudioFrame) -> bool:
        """Whether ``frame`` may count as the user's voice."""
        reference = self._reference(frame)
        if reference < QUIET_REFERENCE:
            return True
        if self.handling == "pause":
            self.suppressed += 1
            return False
        heard = power(frame.pcm)
        ratio_db = 10.0 * math.log10(max(heard, 1e-12) / reference)
        if ratio_db > self.coupling_db + self.margin_db:
            return True
        self._ratios.append(ratio_db)  # the room's echo: learn from it
        self.suppressed += 1
        return False

    def _reference(self, frame: AudioFrame) -> float:
        """The loudest played frame that can be coming back in ``frame`` (within the echo window before it)."""
        self._forget(frame.at)
        loudest = 0.0
        for playback in self._playbacks:
            first = math.floor((frame.at - ECHO_WINDOW_S - playback.at) / FRAME_S)
            last = math.floor((frame.end - playback.at) / FRAME_S)
            first, last = max(first, 0), min(last, len(playback.energies) - 1)
            if first <= last:
                loudest = max(loudest, float(playback.energies[first:last + 1].max()))
        return loudest

    def _forget(self, now: float) -> None:
        while self._playbacks and self._playbacks[0].end + ECHO_WINDOW_S < now - 1.0:
            self._playbacks.popleft()
