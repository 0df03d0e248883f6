"""Japanese words: MeCab (fugashi) with the IPAdic dictionary (the ``ipadic`` package), one tagger per thread.

IPAdic's dictionary is 51 MB against unidic-lite's 249 MB; JSQuAD fused R@1 0.9223 against 0.9221.
Its words come out here in the names of UniDic's categories, which search and the classifier were written against:
IPAdic's prefix 接頭詞 is UniDic's 接頭辞, its noun suffixes (名詞,接尾) are 接尾辞 (名詞的), its numbers (名詞,数) are
数詞, and する/できる have UniDic's lemmas 為る/出来る. ``pron`` is the spoken form (今日は -> キョー ワ), ``kana`` the
written reading; both are None for a word the dictionary does not know.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple


class Feature(NamedTuple):
    pos1: str
    pos2: str
    lemma: str
    kana: str | None
    pron: str | None


class Morpheme(NamedTuple):
    """One word (copied out of MeCab: fugashi's own nodes are overwritten by the tagger's next text)."""

    surface: str
    white_space: str
    feature: Feature
    is_unk: bool


# IPAdic's (pos1, pos2) -> UniDic's, where search or the classifier tells them apart.
_SUFFIX_OF = {"名詞": "名詞的", "動詞": "動詞的", "形容詞": "形容詞的"}
_LEMMA = {"する": "為る", "できる": "出来る"}


def _unidic_pos(pos1: str, pos2: str) -> tuple[str, str]:
    if pos1 == "接頭詞":
        return "接頭辞", pos2
    if pos2 == "接尾" and pos1 in _SUFFIX_OF:
        return "接尾辞", _SUFFIX_OF[pos1]
    if pos1 == "名詞" and pos2 == "数":
        return pos1, "数詞"
    return pos1, pos2


def _field(fields: list[str], index: int) -> str | None:
    value = fields[index] if len(fields) > index else "*"
    return None if value == "*" else value


class Tagger:
    """A MeCab tagger over IPAdic (not safe to share between threads: see :func:`tagger`)."""

    def __init__(self) -> None:
        import fugashi
        import ipadic  # type: ignore[import-untyped]

        self._mecab = fugashi.GenericTagger(ipadic.MECAB_ARGS)

    def __call__(self, text: str) -> list[Morpheme]:
        words = []
        for node in self._mecab(text):
            # IPAdic's features: pos1-4, conjugation type and form, base form, reading, pronunciation (7 fields
            # for an unknown word: no reading)
            fields = list(node.feature)
            pos1, pos2 = _unidic_pos(fields[0], fields[1] if len(fields) > 1 else "*")
            base = _field(fields, 6) or node.surface
            feature = Feature(pos1, pos2, _LEMMA.get(base, base), _field(fields, 7), _field(fields, 8))
            words.append(Morpheme(node.surface, node.white_space, feature, bool(node.is_unk)))
        return words


_local = threading.local()


def tagger() -> Callable[[str], list[Morpheme]] | None:
    """This thread's tagger (MeCab taggers are not thread-safe), or None when fugashi or IPAdic is missing."""
    if not hasattr(_local, "tagger"):
        try:
            _local.tagger = Tagger()
        except Exception:
            _local.tagger = None
    found: Tagger | None = _local.tagger
    return found
