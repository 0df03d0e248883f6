"""Japanese text to kana for a system voice (espeak-ng), when Open JTalk does not voice the line itself.

espeak-ng's ``ja`` voice reads kana well but says "Chinese letter" for every kanji, so Japanese text is turned into
its *pronunciation* in katakana first. The reading comes from Open JTalk's dictionary (pyopenjtalk-plus, the same
one its voice reads with: 今日は -> キョーワ, with the particle は read ワ and へ read エ, 東京 -> トーキョー), so a
line sounds the same whichever engine says it (it is Madoi's one Japanese dictionary: search cuts words with it too,
companions/common/morphology.py). Without pyopenjtalk-plus nothing reads kanji: the text is said as written.
"""

from __future__ import annotations

import re
from typing import Any, Final

_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_KANJI: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Japanese with what goes inside a Japanese sentence (punctuation, full-width forms), as one captured run.
_JAPANESE_RUNS: Final = re.compile(r"([0-9\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff9f]+)")


def contains_japanese(text: str) -> bool:
    return _JAPANESE.search(text) is not None


def contains_kanji(text: str) -> bool:
    return _KANJI.search(text) is not None


def to_kana(text: str) -> str:
    """The katakana pronunciation of ``text``; words without a reading are kept as written."""
    if not contains_kanji(text):
        return text
    try:
        import pyopenjtalk
    except ImportError:
        return text
    return "".join(_openjtalk_kana(pyopenjtalk, part) if contains_japanese(part) else part
                   for part in _JAPANESE_RUNS.split(text) if part)


def _openjtalk_kana(pyopenjtalk: Any, text: str) -> str:
    # Per run of Japanese: Open JTalk spells Latin letters out in katakana, which espeak would say letter by letter.
    reading = str(pyopenjtalk.g2p(text, kana=True, use_sudachi_kanji_yomi=False))  # as Mei reads it
    return reading if reading.strip() else text
