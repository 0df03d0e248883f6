"""What a listener notices in a WAV file, measured: its length, its pitch, its brightness."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as wav:
        assert wav.getsampwidth() == 2
        assert wav.getnchannels() == 1
        rate = wav.getframerate()
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.float64)
    return samples, rate


def seconds(path: str | Path) -> float:
    samples, rate = read_wav(path)
    return len(samples) / rate


def median_pitch(path: str | Path) -> float:
    """The median fundamental frequency (Hz) of the voiced 40 ms frames (autocorrelation, 60-600 Hz)."""
    samples, rate = read_wav(path)
    frame = int(0.04 * rate)
    loud = 0.2 * np.abs(samples).max()
    pitches = []
    for start in range(0, len(samples) - frame, frame // 2):
        chunk = samples[start:start + frame]
        if np.abs(chunk).max() < loud:
            continue
        chunk = chunk - chunk.mean()
        corr = np.correlate(chunk, chunk, mode="full")[frame - 1:]
        low, high = int(rate / 600), int(rate / 60)
        lag = low + int(np.argmax(corr[low:high]))
        if corr[lag] > 0.5 * corr[0]:  # clearly periodic: a voiced frame
            pitches.append(rate / lag)
    assert pitches, f"no voiced frame in {path}"
    return float(np.median(pitches))


def spectral_centroid(path: str | Path) -> float:
    """The centre of mass of the spectrum (Hz): higher sounds brighter / smaller."""
    samples, rate = read_wav(path)
    spectrum = np.abs(np.fft.rfft(samples))
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    return float((spectrum * freqs).sum() / spectrum.sum())
