"""The sound device's stand-in for the speaker's tests and the voice benchmarks (there is no sound card here): a
player process that plays for as long as the WAV lasts, and what the speaker's playback listeners are told of it."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Final

PLAYER: Final = (sys.executable, "-c",
                 "import sys, time, wave\nw = wave.open(sys.argv[1])\ntime.sleep(w.getnframes() / w.getframerate())\n")


class Played:
    """A playback listener (``speaker.playback_listeners.append(played)``; any thread): when each chunk's WAV
    started playing and when it stopped (time.monotonic())."""

    def __init__(self) -> None:
        self.events: list[tuple[float, Path | None]] = []
        self._lock = threading.Lock()

    def __call__(self, path: Path | None) -> None:
        with self._lock:
            self.events.append((time.monotonic(), path))

    def clear(self) -> None:
        with self._lock:
            self.events.clear()

    @property
    def starts(self) -> list[float]:
        return [at for at, path in self.events if path is not None]

    @property
    def ends(self) -> list[float]:
        return [at for at, path in self.events if path is None]

    @property
    def gaps(self) -> list[float]:
        """The silences heard between consecutive chunks (s)."""
        starts, ends = self.starts, self.ends
        return [starts[i + 1] - ends[i] for i in range(min(len(starts) - 1, len(ends)))]
