"""Speech as WAV files: written for the user's eyes only (:func:`write_speech_wav`), and played on the sound device
in a way that can be stopped at once.

pyttsx3's espeak driver plays through ``aplay`` inside its synthesis callback, where nothing can stop it; so the
speaker renders WAV files and plays them here: with a player process (``pw-play``, ``paplay``, ``aplay``,
``afplay``, or a command from the caller) that :meth:`WavPlayer.stop` terminates, or ``winsound`` on Windows.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import wave
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from companions.common.private_files import private_file

PLAYER_CANDIDATES: Final[tuple[tuple[str, ...], ...]] = (
    ("pw-play",), ("paplay",), ("aplay", "-q"), ("afplay",),
)


class AudioDeviceError(Exception):
    """The sound device (or a player for it) is missing or refused to play; ``str(err)`` says why."""


def find_player() -> tuple[str, ...] | None:
    """The first player command found on PATH (or the winsound marker on Windows), None when there is none."""
    if sys.platform == "win32":
        return ("winsound",)
    for candidate in PLAYER_CANDIDATES:
        if shutil.which(candidate[0]) is not None:
            return candidate
    return None


def write_speech_wav(path: Path, frames: bytes, rate: int) -> float:
    """Writes 16-bit mono ``frames`` at ``rate`` to ``path`` (0600: what a companion said is the user's); returns
    its duration in seconds."""
    private_file(path)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(frames)
    return len(frames) / 2 / rate


def wav_duration(path: Path) -> float:
    with wave.open(str(path), "rb") as wav:
        rate = wav.getframerate()
        return wav.getnframes() / rate if rate else 0.0


class WavPlayer:
    """Plays one file at a time from the speaker thread; :meth:`stop` may be called from any thread."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = tuple(command)
        self._process: subprocess.Popen[bytes] | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()

    def play(self, path: Path, *, abandoned: Callable[[], bool] | None = None) -> bool:
        """Blocks until ``path`` has played (True) or :meth:`stop` cut it short (False).

        ``abandoned`` is asked once the player runs: a :meth:`stop` that came while it was starting (before there
        was a process to stop) is then not lost, as long as the caller made ``abandoned`` true before stopping.
        """
        self._stopped.clear()
        if self.command == ("winsound",):
            return self._play_winsound(path)
        with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a player's children cannot hold it open
            try:
                process = subprocess.Popen([*self.command, str(path)], stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=errors,
                                           start_new_session=os.name == "posix")
            except OSError as err:
                raise AudioDeviceError(f"cannot run the audio player {self.command[0]!r}: {err}") from err
            with self._lock:
                self._process = process
            if abandoned is not None and abandoned():
                self.stop()
            try:
                process.wait()
            finally:
                with self._lock:
                    self._process = None
            if self._stopped.is_set():
                return False
            if process.returncode != 0:
                errors.seek(0)
                detail = errors.read().decode("utf-8", "replace").strip().splitlines()
                raise AudioDeviceError(f"{self.command[0]} exited with {process.returncode}"
                                       + (f": {detail[-1]}" if detail else ""))
        return True

    def _play_winsound(self, path: Path) -> bool:
        winsound: Any = importlib.import_module("winsound")  # Windows only

        try:
            winsound.PlaySound(str(path), winsound.SND_FILENAME | winsound.SND_ASYNC | winsound.SND_NODEFAULT)
        except RuntimeError as err:
            raise AudioDeviceError(f"winsound cannot play: {err}") from err
        finished = not self._stopped.wait(wav_duration(path))
        if not finished:
            winsound.PlaySound(None, 0)
        return finished

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            process = self._process
        if process is None or process.poll() is not None:
            return
        if os.name == "posix":  # the whole group: a player may be a shell script with children
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        else:
            process.terminate()
