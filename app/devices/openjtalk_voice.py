"""Open JTalk's Japanese voice "Mei" (pyopenjtalk-plus: the dictionary and the HTS voice ship inside the wheel).

Offline, about 0.1 of real time on two cores. The reading comes from Open JTalk's own dictionary (kanji included:
no conversion to kana first). A voice is tuned by

- ``speed``: 1.0 is Mei's own pace (the speaker makes it from the words-per-minute rate: rate / 170);
- ``half_tone``: semitones added to the pitch;
- ``all_pass``: the all-pass constant of the mel-cepstral synthesis filter (Mei's is 0.55). pyopenjtalk exposes no
  setter for it (``open_jtalk -a`` sets it), and HTS engine takes it from the voice file's ``OPTION[MCP]:ALPHA=``:
  a copy of Mei's file with that one value rewritten (same width, so the byte positions stay) is loaded instead.

One :class:`OpenJTalkVoice` is used by one thread (the speaker's renderer); its HTS engines are its own, not the
package's global one. Mei: HTS Voice "Mei", (c) 2009-2013 Nagoya Institute of Technology, Department of Computer
Science, released by the MMDAgent Project Team, CC BY 3.0 (credited in the About box, ui/window/about.py, and the
README).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Final

from app.devices.audio_output import write_speech_wav

log = logging.getLogger(__name__)

MEI_ALL_PASS: Final = 0.55
_ALPHA: Final = re.compile(rb"(OPTION\[MCP\]:ALPHA=)([0-9.]+)")


class OpenJTalkUnavailable(Exception):
    """Open JTalk cannot voice anything here (not installed, or its voice or dictionary does not load)."""


class OpenJTalkVoice:
    """Renders Japanese text to 16-bit mono WAV files with Mei, tuned per line. Not thread-safe: one owner."""

    def __init__(self, scratch: Path) -> None:
        self._scratch = scratch  # where tuned copies of Mei's voice file go (the speaker's temporary folder)
        self._pyopenjtalk: Any = None
        self._engines: dict[float, Any] = {}  # all-pass constant -> HTSEngine
        self._mei: bytes = b""
        self.problem: str | None = None

    def load(self) -> None:
        """Imports pyopenjtalk and says one word, so that the first line does not pay for the dictionary.

        Raises:
            OpenJTalkUnavailable: with the reason, worded for a person.
        """
        if self._pyopenjtalk is not None:
            return
        try:
            import pyopenjtalk


            self._mei = Path(pyopenjtalk.DEFAULT_HTS_VOICE.decode()).read_bytes()
            self._pyopenjtalk = pyopenjtalk
            self.synthesize("今日は風。")  # the dictionary and the reading models load on the first line
        except Exception as err:  # ImportError, a missing voice file, a dictionary that does not load
            self._pyopenjtalk = None
            self.problem = f"Open JTalk is not available: {err}"
            raise OpenJTalkUnavailable(self.problem) from err

    def synthesize(self, text: str, *, speed: float = 1.0, half_tone: float = 0.0, all_pass: float | None = None,
                   volume: float = 1.0) -> tuple[bytes, int]:
        """16-bit mono samples of ``text`` said by Mei, and their sample rate (48 kHz)."""
        import numpy as np

        # Sudachi's second opinion on kanji with several readings costs 120 MB of memory (measured: 137 -> 259 MB)
        # and changed none of 20 sentences chosen for such kanji (一日, 市場, 上手, 人気, 方, 何人 ...): left out.
        labels = self._pyopenjtalk.extract_fullcontext(text, use_sudachi_kanji_yomi=False)
        engine = self._engine(MEI_ALL_PASS if all_pass is None else round(all_pass, 2))
        engine.set_speed(max(0.3, min(3.0, speed)))
        engine.add_half_tone(half_tone)
        samples = engine.synthesize(labels)  # float64 on the int16 scale
        rate = int(engine.get_sampling_frequency())
        audio = np.clip(np.asarray(samples) * max(0.0, volume), -32768, 32767).astype("<i2")
        return audio.tobytes(), rate

    def write_wav(self, text: str, path: Path, **tuning: Any) -> float:
        """Writes ``text`` said by Mei to ``path`` (0600); returns its duration in seconds."""
        data, rate = self.synthesize(text, **tuning)
        return write_speech_wav(path, data, rate)

    def _engine(self, all_pass: float) -> Any:
        engine = self._engines.get(all_pass)
        if engine is not None:
            return engine
        from pyopenjtalk.htsengine import HTSEngine

        voice = self._pyopenjtalk.DEFAULT_HTS_VOICE
        if all_pass != MEI_ALL_PASS:
            tuned = _with_all_pass(self._mei, all_pass)
            if tuned is None:
                log.warning("Mei's voice file has no all-pass constant: all_pass %.2f is not applied", all_pass)
            else:
                path = self._scratch / f"mei-alpha-{all_pass:.2f}.htsvoice"
                path.write_bytes(tuned)
                voice = str(path).encode()
        engine = HTSEngine(voice)
        self._engines[all_pass] = engine
        return engine


def _with_all_pass(voice: bytes, all_pass: float) -> bytes | None:
    """``voice`` (an HTS voice file) with its all-pass constant set to ``all_pass``, at the same width."""
    found = _ALPHA.search(voice)
    if found is None:
        return None
    value = f"{all_pass:.{max(1, len(found.group(2)) - 2)}f}".encode()
    if len(value) != len(found.group(2)):
        return None
    return voice[:found.start(2)] + value + voice[found.end(2):]
