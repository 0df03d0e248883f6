"""Japanese speech for the voice-input tests and benchmarks: Open JTalk's voice Mei (``app/devices/openjtalk_voice.py``,
the companions' own Japanese voice) says a sentence into a WAV file with silence around it, as a person would into a
microphone; the microphone's stand-in plays it in real time."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from app.devices.openjtalk_voice import OpenJTalkVoice
from app.voice_input.microphone import resample
from companions.voice_input.audio import SAMPLE_RATE
from tests.app.speech_audio import Clip, voiced_span, write_wav

_VOICE: OpenJTalkVoice | None = None


def _voice() -> OpenJTalkVoice:
    global _VOICE
    if _VOICE is None:
        _VOICE = OpenJTalkVoice(Path(tempfile.gettempdir()))
        _VOICE.load()
    return _VOICE


def japanese_clip(text: str, path: Path, *, before_s: float = 1.0, after_s: float = 2.0) -> Clip:
    """Mei saying ``text`` after ``before_s`` of silence and followed by ``after_s``, at 16 kHz."""
    data, rate = _voice().synthesize(text)
    speech = resample(np.frombuffer(data, dtype="<i2").astype(np.float32), rate)
    onset, end = voiced_span(speech.astype("<i2").tobytes())
    pad = lambda seconds: np.zeros(round(seconds * SAMPLE_RATE), dtype=np.float32)  # noqa: E731
    whole = np.concatenate([pad(before_s), speech, pad(after_s)])
    write_wav(path, whole)
    return Clip(path, before_s + onset, before_s + end, whole.size / SAMPLE_RATE)
