"""Japanese text to kana for the speech engine.

espeak-ng's ``ja`` voice reads kana well but says "Chinese letter" for every kanji, so Japanese text is turned into
its *pronunciation* in katakana first. Chosen: fugashi + IPAdic (MeCab, companions/common/morphology.py) rather than
pykakasi, because MeCab segments the sentence and picks readings in context (今日は -> キョーワ, with the particle
は read ワ and へ read エ, and 東京 -> トーキョー) where pykakasi converts word by word from a dictionary and reads
particles as written (ハ, ヘ). Unknown words (latin letters, digits, emoji) are kept as they are.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Final

_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_KANJI: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

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
    parts: list[str] = []
    with _tagger_lock:
        for word in _get_tagger()(text):
            feature = word.feature
            reading = None if word.is_unk else getattr(feature, "pron", None) or getattr(feature, "kana", None)
            parts.append(word.white_space + (reading if reading and reading != "*" else word.surface))
    return "".join(parts)
