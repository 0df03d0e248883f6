"""Japanese text to kana for a system voice (espeak-ng), when Open JTalk does not voice the line itself.

espeak-ng's ``ja`` voice reads kana well but says "Chinese letter" for every kanji, so Japanese text is turned into
its *pronunciation* in katakana first. The reading comes from Open JTalk's dictionary (pyopenjtalk-plus, the same
one its voice reads with: 今日は -> キョーワ, with the particle は read ワ and へ read エ, 東京 -> トーキョー), so a
line sounds the same whichever engine says it. Without pyopenjtalk: fugashi + IPAdic (MeCab,
companions/common/morphology.py), which also segments in context; unknown words (latin letters, emoji) are kept.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Final

_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_KANJI: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Japanese with what goes inside a Japanese sentence (punctuation, full-width forms), as one captured run.
_JAPANESE_RUNS: Final = re.compile(r"([0-9\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff9f]+)")

_tagger: Any = None
_tagger_lock = threading.Lock()  # MeCab taggers are not safe to share between threads without one


def contains_japanese(text: str) -> bool:
    return _JAPANESE.search(text) is not None


def contains_kanji(text: str) -> bool:
    return _KANJI.search(text) is not None


def _get_tagger() -> Any:
    global _tagger
    if _tagger is None:
        from companions.common.morphology import Tagger  # on first Japanese utterance: the dictionary costs memory

        _tagger = Tagger()
    return _tagger


def to_kana(text: str) -> str:
    """The katakana pronunciation of ``text``; words without a reading are kept as written."""
    if not contains_kanji(text):
        return text
    try:
        import pyopenjtalk
    except ImportError:
        return _mecab_kana(text)
    return "".join(_openjtalk_kana(pyopenjtalk, part) if contains_japanese(part) else part
                   for part in _JAPANESE_RUNS.split(text) if part)


def _openjtalk_kana(pyopenjtalk: Any, text: str) -> str:
    # Per run of Japanese: Open JTalk spells Latin letters out in katakana, which espeak would say letter by letter.
    reading = str(pyopenjtalk.g2p(text, kana=True, use_sudachi_kanji_yomi=False))  # as Mei reads it
    return reading if reading.strip() else text


def _mecab_kana(text: str) -> str:
    parts: list[str] = []
    with _tagger_lock:
        for word in _get_tagger()(text):
            feature = word.feature
            reading = None if word.is_unk else getattr(feature, "pron", None) or getattr(feature, "kana", None)
            parts.append(word.white_space + (reading if reading and reading != "*" else word.surface))
    return "".join(parts)
