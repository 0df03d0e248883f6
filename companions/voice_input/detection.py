"""When the user speaks: voice activity with a pre-roll, a settable end-of-speech silence and a sensitivity.

Each 20 ms frame comes with a verdict, *voiced* or not (the voice-activity port, above the level floor, and not the
companions' own voice: ``listening.py`` asks them). The detector starts an utterance once enough of the last
frames were voiced (fewer at a higher sensitivity), and hands over the frames from up to ``pre_roll_s`` *before*
the first voiced one: a detector that starts recognizing at its trigger loses the first syllable (150-500 ms; AIRI
#2092). The utterance ends after ``end_silence_s`` without a voiced frame (AIRI #1551 wanted it settable), or after
``MAX_UTTERANCE_S``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Final, Protocol

from companions.voice_input.audio import FRAME_S, AudioFrame

START_WINDOW: Final = 10  # frames (200 ms) looked at to decide that the user started speaking
MAX_UTTERANCE_S: Final = 30.0


@dataclass(frozen=True)
class DetectionSettings:
    """``sensitivity`` 0 (hard to trigger: loud, sustained speech only) to 1 (the faintest voice); it sets the
    voice-activity detector's mode, the level floor and how many voiced frames start an utterance."""

    end_silence_s: float = 0.5
    sensitivity: float = 0.5
    pre_roll_s: float = 0.5

    @property
    def start_frames(self) -> int:
        """Voiced frames among the last :data:`START_WINDOW` that start an utterance: 7 (140 ms) at 0, 2 at 1."""
        return max(2, round(7 - 5 * self.sensitivity))

    @property
    def floor_dbfs(self) -> float:
        """Frames quieter than this are never voiced: -25 dBFS at sensitivity 0, -55 dBFS at 1."""
        return -25.0 - 30.0 * self.sensitivity

    @property
    def echo_margin_db(self) -> float:
        """How much louder than the companions' echo a frame must be to count as the user's, while they speak:
        9 dB at sensitivity 0, 6 dB at 0.5 (Geigel's classic double-talk threshold, half the amplitude), 3 at 1."""
        return 9.0 - 6.0 * self.sensitivity

    @property
    def vad_mode(self) -> int:
        """The WebRTC detector's aggressiveness (3 filters most, 0 least) for this sensitivity."""
        return max(0, min(3, round(3 - 3 * self.sensitivity)))


class VoiceActivity(Protocol):
    """Says whether a 20 ms frame holds a voice (an adapter: the WebRTC detector)."""

    def is_speech(self, pcm: bytes) -> bool: ...

    def set_mode(self, mode: int) -> None:
        """0 (least aggressive: more frames are speech) to 3."""
        ...


@dataclass(frozen=True)
class Began:
    """The user started speaking: ``frames`` are what to recognize first (the pre-roll, then every frame up to
    now), ``onset`` the start of the first voiced frame."""

    frames: list[AudioFrame]
    onset: float


@dataclass(frozen=True)
class Ended:
    """The user stopped speaking: ``speech_end`` is the end of the last voiced frame."""

    speech_end: float


class SpeechDetector:
    """Feed every frame with its verdict (:meth:`frame`); returns :class:`Began`, the frame itself while the user
    speaks (to recognize), :class:`Ended`, or None between utterances."""

    def __init__(self, settings: DetectionSettings | None = None) -> None:
        self.settings = settings or DetectionSettings()
        self._recent: deque[tuple[AudioFrame, bool]] = deque()
        self._speaking = False
        self._last_voiced_end = 0.0
        self._began_at = 0.0

    @property
    def speaking(self) -> bool:
        return self._speaking

    def configure(self, settings: DetectionSettings) -> None:
        self.settings = settings

    def reset(self) -> None:
        """Forgets everything (the microphone closed or was muted)."""
        self._recent.clear()
        self._speaking = False

    def frame(self, frame: AudioFrame, voiced: bool) -> Began | AudioFrame | Ended | None:
        if self._speaking:
            if voiced:
                self._last_voiced_end = frame.end
            if frame.end - self._last_voiced_end >= self.settings.end_silence_s \
                    or frame.end - self._began_at >= MAX_UTTERANCE_S:
                self._speaking = False
                self._recent.clear()
                return Ended(self._last_voiced_end)
            return frame
        self._remember(frame, voiced)
        window = list(self._recent)[-START_WINDOW:]
        if sum(1 for _, v in window if v) < self.settings.start_frames:
            return None
        onset = next(f.at for f, v in window if v)
        return self._begin(onset)

    def begin_now(self) -> Began:
        """Starts an utterance at once (push-to-talk), with the pre-roll before this moment."""
        onset = self._recent[-1][0].end if self._recent else 0.0
        return self._begin(onset)

    def end_now(self, at: float) -> Ended | None:
        """Ends the utterance at once (push-to-talk released); None when none was going on."""
        if not self._speaking:
            return None
        self._speaking = False
        self._recent.clear()
        return Ended(at)

    def _remember(self, frame: AudioFrame, voiced: bool) -> None:
        self._recent.append((frame, voiced))
        keep = START_WINDOW + round(self.settings.pre_roll_s / FRAME_S)
        while len(self._recent) > keep:
            self._recent.popleft()

    def _begin(self, onset: float) -> Began:
        start = onset - self.settings.pre_roll_s - 1e-6
        frames = [f for f, _ in self._recent if f.at >= start]
        self._speaking = True
        self._last_voiced_end = self._recent[-1][0].end if self._recent else onset
        self._began_at = frames[0].at if frames else onset
        self._recent.clear()
        return Began(frames, onset)
