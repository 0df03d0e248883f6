"""Japanese words: MeCab over Open JTalk's dictionary (pyopenjtalk-plus), one analyser per thread.

Madoi's one Japanese dictionary: the voice reads with it (app/devices/openjtalk_voice.py), and search, the query
classifier, the graph and the romaji of names cut words with it here. Only its MeCab is used here, not the reading
rules Open JTalk applies after it for speech (they write numbers out in kanji and call unknown words fillers).
Against MeCab with IPAdic (its own 53 MB dictionary), JSQuAD's 4,442 questions: fused R@1 0.9223 both, R@10 0.9822
-> 0.9820, held-out R@1 0.9184 -> 0.9179; 2.2 ms a paragraph's terms (IPAdic 1.3), 0.4 ms a question's (0.14).

The dictionary has IPAdic's categories; its words come out here in the names of UniDic's, which search and the
classifier were written against: IPAdic's prefix 接頭詞 is UniDic's 接頭辞, its noun suffixes (名詞,接尾) are 接尾辞
(名詞的), its numbers (名詞,数) are 数詞, a Latin letter (記号,アルファベット) is a noun, and する/できる have UniDic's
lemmas 為る/出来る. ``pron`` is the spoken form (今日は -> キョー ワ), ``kana`` the written reading; both are None for a
word the dictionary does not know. A word's ``surface`` is the text's own letters (MeCab reads a copy in full-width
letters), ``white_space`` the blanks before it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

log = logging.getLogger(__name__)


class Feature(NamedTuple):
    pos1: str
    pos2: str
    lemma: str
    kana: str | None
    pron: str | None


class Morpheme(NamedTuple):
    """One word of a text."""

    surface: str
    white_space: str
    feature: Feature
    is_unk: bool


# IPAdic's (pos1, pos2) -> UniDic's, where search or the classifier tells them apart.
_SUFFIX_OF = {"名詞": "名詞的", "動詞": "動詞的", "形容詞": "形容詞的"}
_LEMMA = {"する": "為る", "できる": "出来る"}
# One letter as MeCab is given it: a letter with the half-width sound marks after it (ｶﾞ is one letter, ガ).
_LETTER = re.compile(r".[\uff9e\uff9f\u3099\u309a\u309b\u309c]*", re.DOTALL)


def _unidic_pos(pos1: str, pos2: str) -> tuple[str, str]:
    if pos1 == "接頭詞":
        return "接頭辞", pos2
    if pos2 == "接尾" and pos1 in _SUFFIX_OF:
        return "接尾辞", _SUFFIX_OF[pos1]
    if pos1 == "名詞" and pos2 == "数":
        return pos1, "数詞"
    if pos1 == "記号" and pos2 == "アルファベット":
        return "名詞", "一般"  # A社, Aプラン: a letter standing for a name (IPAdic's own tags a letter it lacks so)
    return pos1, pos2


def _field(fields: list[str], index: int) -> str | None:
    value = fields[index] if len(fields) > index else "*"
    return None if value in ("*", "") else value


class Tagger:
    """MeCab over Open JTalk's dictionary (not safe to share between threads: see :func:`tagger`)."""

    def __init__(self) -> None:
        import pyopenjtalk
        from pyopenjtalk.openjtalk import OpenJTalk

        self._jtalk: Any = OpenJTalk(dn_mecab=pyopenjtalk.OPEN_JTALK_DICT_DIR)
        self._letters: dict[str, str] = {}

    def __call__(self, text: str) -> list[Morpheme]:
        # Where each letter of the text MeCab reads (full-width, a letter and its sound mark as one) starts in
        # ``text``: a word's span there is its surface here.
        starts: list[int] = []
        for found in _LETTER.finditer(text):
            starts.extend([found.start()] * len(self._normalized(found.group())))
        starts.append(len(text))
        words: list[Morpheme] = []
        blank_from = 0
        for morph in self._jtalk.run_mecab_detailed(text)[1]:
            fields: list[str] = morph["features"]
            first, last = morph["char_span"]
            start, end = starts[min(first, len(starts) - 1)], starts[min(last, len(starts) - 1)]
            if fields[1] == "記号" and fields[2] == "空白":
                continue  # a blank: part of the next word's white_space
            pos1, pos2 = _unidic_pos(fields[1], fields[2])
            surface = text[start:end]
            base = _field(fields, 7)
            base = surface if base in (None, fields[0]) else base  # the text's letters, not MeCab's full-width ones
            if base == "する" and fields[0].startswith("で"):
                base = "できる"  # Open JTalk's dictionary has できる (でき, できれ ...) as a form of する
            lemma = _LEMMA.get(base, base)
            feature = Feature(pos1, pos2, lemma, _field(fields, 8), _field(fields, 9))
            words.append(Morpheme(surface, text[blank_from:start], feature, bool(morph["is_unknown"])))
            blank_from = end
        return words

    def _normalized(self, letter: str) -> str:
        found = self._letters.get(letter)
        if found is None:
            found = self._letters[letter] = self._jtalk.normalize_for_mecab(letter) or letter
        return found


_local = threading.local()
_LONG_VOWEL = re.compile(r"([aeiou])-")  # jaconv writes the long-vowel mark ー as "-": ジョーンズ -> jo-nzu


def romaji(text: str) -> str:
    """``text`` in Hepburn romaji, word by word (桜井さくら -> sakurai sakura, ジョーンズ -> joonzu): each word's
    reading in the dictionary, spelt by jaconv's table; a word the dictionary does not know is spelt from its kana,
    and other letters are kept."""
    import jaconv

    analyse = tagger()
    if analyse is None:
        return text
    spelt = []
    for word in analyse(text):
        kana = word.feature.kana if not word.is_unk and word.feature.kana else word.surface
        spelt.append(_LONG_VOWEL.sub(r"\1\1", jaconv.kata2alphabet(jaconv.hira2kata(kana))))
    return " ".join(spelt)


def tagger() -> Callable[[str], list[Morpheme]] | None:
    """This thread's analyser (MeCab's are not thread-safe), or None when pyopenjtalk-plus is missing."""
    if not hasattr(_local, "tagger"):
        try:
            _local.tagger = Tagger()
        except Exception as err:  # not installed, or a bundle without its dictionary
            log.warning("Japanese words are cut as letter pairs only: Open JTalk's dictionary did not load (%s)", err)
            _local.tagger = None
    found: Tagger | None = _local.tagger
    return found
