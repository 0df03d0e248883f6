"""What the voice benchmarks share: the app's speaker (app/devices/speaker.py) saying lines into WAV files, each with
its render time and audio length; Kokoro's test files put in place as if downloaded; and a line's first audio,
heard through the tests' stand-in player (tests/app/devices/stand_in_player.py: no sound card here)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import _report  # noqa: F401 - puts the repository on sys.path

from app.devices.kokoro_files import KOKORO_FILES, kokoro_paths
from app.devices.speaker import Pyttsx3Speaker
from companions.devices.ports import Utterance
from tests.app.devices.stand_in_player import PLAYER, Played

__all__ = [
    "LINE",
    "PLAYER",
    "LineTiming",
    "Said",
    "kokoro_prepared",
    "medians",
    "say_lines",
    "timed_line",
    "with_kokoro",
]
# A companion's line of three sentences: what the first audio waits for.
LINE = ("おはよう、今日はいい天気だね。午後から少し雲が出るみたいだけど、雨は降らないって。"
        "散歩に行くなら、お昼ごはんの前がいいかもしれないね。")


def kokoro_prepared() -> bool:
    """Kokoro's test files (scripts/kokoro_model.py) are assembled and checked."""
    from scripts.script_modules import load_script

    return bool(load_script("kokoro_model").paths().ready())


def with_kokoro(speaker: Pyttsx3Speaker, data_dir: Path) -> None:
    """Kokoro's test files (scripts/kokoro_model.py, assembled first when missing) in place under ``data_dir``, as
    if downloaded: ``speaker`` says Kokoro's lines with them."""
    from scripts.script_modules import load_script

    script = load_script("kokoro_model")
    source = script.paths()
    script.ensure(source)
    files = replace(KOKORO_FILES, voices=replace(KOKORO_FILES.voices, size=script.VOICES_SIZE,
                                                 sha256=script.VOICES_SHA256))
    model, voices = kokoro_paths(data_dir, files)
    model.parent.mkdir(parents=True, exist_ok=True)
    model.symlink_to(source.model)
    voices.symlink_to(source.voices)
    speaker.data_dir, speaker.kokoro_files = data_dir, files


@dataclass(frozen=True)
class Said:
    """A line the speaker said into a WAV file: by which voice, in how long (s), and how long it lasts (s)."""

    text: str
    voice: str
    wav: Path
    took: float
    duration: float

    @property
    def rtf(self) -> float:
        return self.took / self.duration


async def say_lines(speaker: Pyttsx3Speaker, lines: Sequence[str], voice: str | None, *,
                    expect: str | None = None) -> list[Said]:
    """Each of ``lines`` said by ``speaker`` (started, writing WAV files) in ``voice``; stops the benchmark when one
    is not said, or (``expect``) said by a voice whose id does not start with it."""
    said = []
    for line in lines:
        start = time.perf_counter()
        result = await speaker.speak(Utterance(line, voice=voice, speaker_id="bench"))
        took = time.perf_counter() - start
        if not result.success or result.skipped or not result.duration_s or result.wav_path is None:
            raise SystemExit(f"{voice} did not say {line!r}: {result.reason}")
        if expect is not None and not result.voice.startswith(expect):
            raise SystemExit(f"{voice}: {line!r} was said by {result.voice}, not {expect} ({speaker.status.reason})")
        said.append(Said(line, result.voice, Path(result.wav_path), took, result.duration_s))
    return said


@dataclass(frozen=True)
class LineTiming:
    """A line said aloud (s from its start): its first audio, its end, and the silences between its chunks."""

    first: float
    end: float
    gaps: tuple[float, ...]


async def timed_line(speaker: Pyttsx3Speaker, utterance: Utterance, *, expect: str) -> LineTiming:
    """``utterance`` said by ``speaker`` (started, playing through :data:`PLAYER`); stops the benchmark when it is
    not said by a voice whose id starts with ``expect``."""
    played = Played()
    speaker.playback_listeners.append(played)
    try:
        started = time.monotonic()
        result = await speaker.speak(utterance)
        ended = time.monotonic()
    finally:
        speaker.playback_listeners.remove(played)
    if not result.success or not result.voice.startswith(expect):
        raise SystemExit(f"{expect} did not say the line: {result.voice} {result.reason}")
    return LineTiming(played.starts[0] - started, ended - started, tuple(played.gaps))


def medians(timings: Sequence[LineTiming]) -> tuple[float, float, list[float]]:
    """The median first audio and end (s) of ``timings``, and all their gaps."""
    return (statistics.median(t.first for t in timings), statistics.median(t.end for t in timings),
            [gap for t in timings for gap in t.gaps])
