"""Generated speech for the voice-input tests and benchmarks: espeak-ng says it into a WAV file, as a person would
into a microphone, with silence around it (the microphone's stand-in plays the file in real time)."""

from __future__ import annotations

import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.voice_input.microphone import read_pcm16k
from companions.voice_input.audio import SAMPLE_RATE


def say(text: str, path: Path, *, voice: str = "en-us", rate: int = 150) -> Path:
    """espeak-ng's ``voice`` saying ``text`` at ``rate`` words a minute, as a WAV file (22,050 Hz)."""
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-w", str(path), text], check=True,
                   capture_output=True)
    return path


@dataclass(frozen=True)
class Clip:
    """A WAV file of speech with silence around it: where the speech starts and ends in it (seconds)."""

    path: Path
    onset_s: float
    end_s: float
    duration_s: float


def voiced_span(pcm: bytes, threshold_dbfs: float = -45.0) -> tuple[float, float]:
    """Where speech is in ``pcm`` (16 kHz int16): first and last 10 ms window above ``threshold_dbfs``."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
    window = SAMPLE_RATE // 100
    count = samples.size // window
    power = np.mean(samples[: count * window].reshape(count, window) ** 2, axis=1)
    loud = np.flatnonzero(10 * np.log10(np.maximum(power, 1e-12)) > threshold_dbfs)
    return (loud[0] * window / SAMPLE_RATE, (loud[-1] + 1) * window / SAMPLE_RATE) if loud.size else (0.0, 0.0)


def clip(text: str, path: Path, *, before_s: float = 1.0, after_s: float = 2.0, gain: float = 1.0,
         voice: str = "en-us", rate: int = 150) -> Clip:
    """``text`` said after ``before_s`` of silence and followed by ``after_s``, at 16 kHz, ``gain`` as loud."""
    speech = read_pcm16k(say(text, path.with_suffix(".raw.wav"), voice=voice, rate=rate))
    onset, end = voiced_span(speech)
    samples = np.frombuffer(speech, dtype="<i2").astype(np.float32) * gain
    pad = lambda seconds: np.zeros(round(seconds * SAMPLE_RATE), dtype=np.float32)  # noqa: E731
    whole = np.concatenate([pad(before_s), samples, pad(after_s)])
    write_wav(path, whole)
    return Clip(path, before_s + onset, before_s + end, whole.size / SAMPLE_RATE)


def write_wav(path: Path, samples: np.ndarray) -> Path:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(np.clip(samples, -32768, 32767).astype("<i2").tobytes())
    return path
