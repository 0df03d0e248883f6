"""The microphone: a sound card through PortAudio (``sounddevice``), or an audio file played in real time.

Both deliver what the core takes (``companions/voice_input/audio.py``): 20 ms frames of 16 kHz mono int16, each
stamped with the monotonic time of its first sample, from a thread of their own.

- :class:`SoundDeviceMicrophone`: PortAudio asked for 16 kHz mono int16 (PortAudio converts where the card cannot),
  in blocks of 20 ms. ``sounddevice`` loads the PortAudio library when imported: no library (``libportaudio2`` on
  Debian, installed by ``scripts/bootstrap.sh``) or no input device is :class:`MicrophoneUnavailable` with the
  reason, never a crash.
- :class:`FileMicrophone`: the stand-in in tests and benchmarks, as a video file stands in for the webcam: a WAV
  file (any rate, mono or stereo) delivered frame by frame at the pace of the wall clock, then silence (a
  microphone does not end). It can also be a *room* (``echo_gain``): what the speaker plays
  (:meth:`FileMicrophone.hear`) comes back into it, attenuated and late, as a laptop's speakers come back into its
  microphone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np

from companions.voice_input.audio import (
    FRAME_BYTES,
    FRAME_S,
    FRAME_SAMPLES,
    SAMPLE_RATE,
    AudioFrame,
    MicrophoneUnavailable,
)

log = logging.getLogger(__name__)

FILE_PREFIX: Final = "file:"
# A small room's reflections after the direct sound (delay s, gain): about 0.3 s of reverberation (RT60).
ROOM_TAPS: Final = ((0.0, 1.0), (0.023, 0.5), (0.061, 0.3), (0.11, 0.18), (0.17, 0.1), (0.24, 0.05))


def read_pcm16k(path: Path) -> bytes:
    """A WAV file as 16 kHz mono int16 (mixed down, resampled by linear interpolation: speech only needs 8 kHz)."""
    with wave.open(str(path), "rb") as wav:
        rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
        raw = wav.readframes(wav.getnframes())
    if width != 2:
        raise ValueError(f"{path.name}: {8 * width}-bit audio; 16-bit PCM WAV expected")
    samples = np.frombuffer(raw, dtype="<i2").astype(np.float32)
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return resample(samples, rate).astype("<i2").tobytes()


def resample(samples: np.ndarray, rate: int) -> np.ndarray:
    if rate == SAMPLE_RATE or samples.size == 0:
        return samples
    count = int(samples.size * SAMPLE_RATE / rate)
    return np.asarray(np.interp(np.arange(count) * (rate / SAMPLE_RATE), np.arange(samples.size), samples),
                      dtype=np.float32)


def input_devices() -> list[str]:
    """The names of the input devices PortAudio knows (empty when there is none, or no PortAudio)."""
    try:
        import sounddevice
    except OSError:  # no PortAudio library
        return []
    with contextlib.suppress(Exception):
        return [str(d["name"]) for d in sounddevice.query_devices() if int(d["max_input_channels"]) > 0]
    return []


class SoundDeviceMicrophone:
    """A sound card's input through PortAudio. ``device`` is a device's name (or part of it); "" the default."""

    def __init__(self, device: str = "") -> None:
        self.device = device
        self._stream: Any = None
        self._deliver: Callable[[AudioFrame], None] | None = None
        self._pending = b""
        self._lock = threading.Lock()

    @property
    def source(self) -> str:
        return self.device or "the default microphone"

    async def open(self, deliver: Callable[[AudioFrame], None]) -> None:
        try:
            import sounddevice
        except OSError as err:
            raise MicrophoneUnavailable(f"no microphone: the PortAudio library is missing ({err})") from err
        if not input_devices():
            raise MicrophoneUnavailable("no microphone: no audio input device was found")
        self._deliver, self._pending = deliver, b""
        try:
            stream = sounddevice.RawInputStream(samplerate=SAMPLE_RATE, channels=1, dtype="int16",
                                                blocksize=FRAME_SAMPLES, device=self.device or None,
                                                callback=self._on_block)
            stream.start()
        except Exception as err:  # PortAudioError, ValueError (no such device)
            raise MicrophoneUnavailable(f"no microphone: cannot open {self.source!r}: {err}") from err
        self._stream = stream

    def _on_block(self, data: Any, frames: int, times: Any, status: Any) -> None:
        """PortAudio's thread."""
        deliver = self._deliver
        if deliver is None:
            return
        # When the block's first sample was captured: PortAudio's ADC time against its own clock's now.
        now = time.monotonic()
        lag = float(times.currentTime) - float(times.inputBufferAdcTime) if times is not None else 0.0
        first = now - (lag if 0.0 < lag < 1.0 else frames / SAMPLE_RATE)
        with self._lock:
            start = first - (len(self._pending) // 2) / SAMPLE_RATE
            pcm = self._pending + bytes(data)
            offset = 0
            while len(pcm) - offset >= FRAME_BYTES:
                deliver(AudioFrame(pcm[offset:offset + FRAME_BYTES], start + offset / 2 / SAMPLE_RATE))
                offset += FRAME_BYTES
            self._pending = pcm[offset:]

    async def close(self) -> None:
        stream, self._stream = self._stream, None
        self._deliver = None
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.stop()
                stream.close()


class FileMicrophone:
    """A WAV file heard in real time, then silence; a room when ``echo_gain`` > 0 (see the module docstring)."""

    def __init__(self, path: Path, *, echo_gain: float = 0.0, echo_delay_s: float = 0.04,
                 noise_dbfs: float | None = -70.0) -> None:
        self.path = path
        self.echo_gain = echo_gain
        self.echo_delay_s = echo_delay_s
        self.noise_dbfs = noise_dbfs
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        # (monotonic start, samples, played by the speakers) of what sounds in the room besides the file
        self._echo: list[tuple[float, np.ndarray, bool]] = []
        self._lock = threading.Lock()
        self.started_at = 0.0  # monotonic time of the file's first sample

    @property
    def source(self) -> str:
        return str(self.path)

    async def open(self, deliver: Callable[[AudioFrame], None]) -> None:
        if self._thread is not None:
            return
        try:
            pcm = read_pcm16k(self.path)
        except (OSError, EOFError, wave.Error, ValueError) as err:
            raise MicrophoneUnavailable(f"no microphone: cannot read {self.path}: {err}") from err
        self._stop.clear()
        self.started_at = time.monotonic() + 0.05
        self._thread = threading.Thread(target=self._run, args=(pcm, deliver, self.started_at),
                                        name="file-microphone", daemon=True)
        self._thread.start()

    def hear(self, pcm: bytes, at: float) -> None:
        """The room's speakers play ``pcm`` (16 kHz mono int16) from ``at`` (monotonic); any thread. It comes back
        ``echo_delay_s`` late and ``echo_gain`` as loud, with the room's reflections after it (:data:`ROOM_TAPS`)."""
        if self.echo_gain > 0:
            for delay, gain in ROOM_TAPS:
                self._add(pcm, at + self.echo_delay_s + delay, self.echo_gain * gain, played=True)

    def add(self, pcm: bytes, at: float, gain: float = 1.0) -> None:
        """Someone says ``pcm`` into the microphone from ``at`` (monotonic), over whatever it hears; any thread."""
        self._add(pcm, at, gain, played=False)

    def _add(self, pcm: bytes, at: float, gain: float, *, played: bool) -> None:
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) * gain
        with self._lock:
            self._echo.append((at, samples, played))

    def silence(self, at: float) -> None:
        """The speakers stopped at ``at``: nothing more of what they were playing comes back (a person in the
        room goes on talking)."""
        with self._lock:
            kept = []
            for start, samples, played in self._echo:
                if played and start + self.echo_delay_s >= at:
                    continue
                end = max(0, int((at + self.echo_delay_s - start) * SAMPLE_RATE)) if played else samples.size
                kept.append((start, samples[:end], played))
            self._echo = kept

    def _run(self, pcm: bytes, deliver: Callable[[AudioFrame], None], start: float) -> None:
        voice = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
        rng = np.random.default_rng(27)
        noise = 32768.0 * 10 ** (self.noise_dbfs / 20) if self.noise_dbfs is not None else 0.0
        index = 0
        while not self._stop.is_set():
            at = start + index * FRAME_S
            delay = at + FRAME_S - time.monotonic()  # a frame is delivered once it has been "captured"
            if delay > 0 and self._stop.wait(delay):
                break
            lo = index * FRAME_SAMPLES
            frame = np.zeros(FRAME_SAMPLES, dtype=np.float32)
            part = voice[lo:lo + FRAME_SAMPLES]
            frame[: part.size] = part
            if noise:
                frame += rng.normal(0.0, noise, FRAME_SAMPLES).astype(np.float32)
            self._mix_echo(frame, at)
            deliver(AudioFrame(np.clip(frame, -32768, 32767).astype("<i2").tobytes(), at))
            index += 1

    def _mix_echo(self, frame: np.ndarray, at: float) -> None:
        with self._lock:
            echoes = list(self._echo)
            self._echo = [e for e in echoes if e[0] + e[1].size / SAMPLE_RATE > at - 1.0]
        for begin, samples, _ in echoes:
            offset = round((at - begin) * SAMPLE_RATE)
            lo, hi = max(offset, 0), min(offset + FRAME_SAMPLES, samples.size)
            if lo < hi:
                frame[lo - offset:hi - offset] += samples[lo:hi]

    async def close(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        await asyncio.to_thread(thread.join, 2.0)


def build_microphone(source: str, *, echo_gain: float = 0.0) -> SoundDeviceMicrophone | FileMicrophone:
    """``file:PATH`` (or a path to a ``.wav`` file) is the stand-in; anything else names a sound card's input."""
    if source.startswith(FILE_PREFIX):
        return FileMicrophone(Path(source[len(FILE_PREFIX):]).expanduser(), echo_gain=echo_gain)
    if source.lower().endswith(".wav"):
        return FileMicrophone(Path(source).expanduser(), echo_gain=echo_gain)
    return SoundDeviceMicrophone(source)
