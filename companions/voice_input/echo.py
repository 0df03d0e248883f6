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
DELAY_AFTER: Final = 50  # echo frames (1 s) before the echo path's delay is looked for
DELAY_EVERY: Final = 25  # and looked for again every 25 echo frames
DELAY_MIN_CORRELATION: Final = 0.5
ALIGNED_BEFORE_S: Final = 0.1  # with the delay known: the played frames this much before it still count


@dataclass
class _Playback:
    energies: np.ndarray  # per 20 ms frame of what is played (power)
    at: float  # monotonic time its first sample is played
    end: float


class EchoGuard:
    """Judges microphone frames against what the speaker plays (:meth:`play`). Used from the loop only."""

    def __init__(self, handling: EchoHandling = "guard", margin_db: float = 6.0) -> None:
        self.handling: EchoHandling = handling
        self.margin_db = margin_db
        self._playbacks: deque[_Playback] = deque()
        self._ratios: deque[float] = deque(maxlen=200)
        self._heard: deque[tuple[float, float]] = deque(maxlen=150)  # echo frames: (time, power)
        self._since_delay = 0
        self._delay: float | None = None
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

    @property
    def delay_s(self) -> float | None:
        """The echo path's delay as learned (the speakers' and the microphone's buffers, the room), or None."""
        return self._delay

    def _learn_delay(self, frame: AudioFrame, heard: float) -> None:
        """Keeps the echo frames' levels; every half second, finds the lag at which what was played best explains
        what was heard (the correlation of their levels in dB), once there is enough of it."""
        self._heard.append((frame.at, heard))
        self._since_delay += 1
        if self._since_delay < DELAY_EVERY or len(self._heard) < DELAY_AFTER:
            return
        self._since_delay = 0
        heard_db = np.array([10.0 * math.log10(max(p, 1e-12)) for _, p in self._heard])
        best, best_lag = DELAY_MIN_CORRELATION, None
        for step in range(round(ECHO_WINDOW_S / FRAME_S) + 1):
            lag = step * FRAME_S
            played = np.array([self._energy_at(at - lag) for at, _ in self._heard])
            usable = played > QUIET_REFERENCE
            if usable.sum() < DELAY_AFTER // 2:
                continue
            played_db = 10.0 * np.log10(played[usable])
            if np.std(played_db) < 1e-6 or np.std(heard_db[usable]) < 1e-6:
                continue
            correlation = float(np.corrcoef(played_db, heard_db[usable])[0, 1])
            if correlation > best:
                best, best_lag = correlation, lag
        if best_lag is not None and best_lag != self._delay:
            self._delay = best_lag
            # The echo heard, measured again against the aligned reference: the coupling holds at once.
            ratios = [10.0 * math.log10(max(p, 1e-12) / reference) for at, p in self._heard
                      if (reference := self._reference_at(at)) >= QUIET_REFERENCE]
            self._ratios = deque(ratios, maxlen=self._ratios.maxlen)

    def _energy_at(self, at: float) -> float:
        for playback in self._playbacks:
            index = math.floor((at - playback.at) / FRAME_S)
            if 0 <= index < len(playback.energies):
                return float(playback.energies[index])
        return 0.0

    def allows(self, frame: AudioFrame, *, learn: bool = True) -> bool:
        """Whether ``frame`` may count as the user's voice. ``learn=False`` while the user may be speaking: a frame
        of the user's voice too quiet to pass must not teach the guard that the echo is louder than it is (it
        would then let less and less of the user through)."""
        reference = self._reference(frame)
        if reference < QUIET_REFERENCE:
            return True
        if self.handling == "pause":
            self.suppressed += 1
            return False
        heard = power(frame.pcm)
        ratio_db = 10.0 * math.log10(max(heard, 1e-12) / reference)
        coupling = self.coupling_db
        if ratio_db > coupling + self.margin_db:
            return True
        if learn and (not self.learned or ratio_db <= coupling + self.margin_db / 2):
            self._ratios.append(ratio_db)  # the room's echo: learn from it (a frame half-way up may be the user)
            self._learn_delay(frame, heard)
        self.suppressed += 1
        return False

    def _reference(self, frame: AudioFrame) -> float:
        """The loudest played frame that can be coming back in ``frame``: within the echo window before it, or,
        once the echo path's delay is known, around that delay (its reverberation's first tenth of a second)."""
        self._forget(frame.at)
        return self._reference_at(frame.at)

    def _reference_at(self, at: float) -> float:
        end = at + FRAME_S
        if self._delay is None:
            earliest, latest = at - ECHO_WINDOW_S, end
        else:
            earliest, latest = at - self._delay - ALIGNED_BEFORE_S, end - self._delay + FRAME_S
        loudest = 0.0
        for playback in self._playbacks:
            first = math.floor((earliest - playback.at) / FRAME_S)
            last = math.floor((latest - playback.at) / FRAME_S)
            first, last = max(first, 0), min(last, len(playback.energies) - 1)
            if first <= last:
                loudest = max(loudest, float(playback.energies[first:last + 1].max()))
        return loudest

    def _forget(self, now: float) -> None:
        while self._playbacks and self._playbacks[0].end + ECHO_WINDOW_S < now - 1.0:
            self._playbacks.popleft()
