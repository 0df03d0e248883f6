"""Japanese analysis for the query classifier: MeCab's words, noun runs, and two things joined by the particle と.

Character patterns cannot tell the particle と (「AとB」) from a と inside a word (ひとこと, ざっと, とき, まとめると)
or from と before a verb (「田中さんと行った店」), and a question about a whole collection (「アカリとの会話では…」)
then looked like a comparison of two things. MeCab (over Open JTalk's dictionary, its words in UniDic's categories:
companions/common/morphology.py) tags the particle, so the two things it joins are nouns on both sides.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import NamedTuple

from companions.common import morphology

_NOUN = "名詞"


class Word(NamedTuple):
    """One word as MeCab tagged it."""

    surface: str
    white_space: str
    pos1: str
    pos2: str
    lemma: str


class Tagger:
    """This thread's MeCab tagger (they are not safe to share between threads), which remembers the words of the
    last text: the classifier looks at one query's words several times (pairs, entities, keywords)."""

    _local = threading.local()

    @classmethod
    def words(cls, text: str) -> list[Word]:
        local = cls._local
        if getattr(local, "text", None) == text:
            return list(local.words)
        tagger = morphology.tagger()
        if tagger is None:
            raise RuntimeError("Japanese analysis needs pyopenjtalk-plus")
        words = [Word(w.surface, w.white_space, w.feature.pos1, w.feature.pos2, w.feature.lemma)
                 for w in tagger(text)]
        local.text, local.words = text, tuple(words)
        return words


def noun_runs(text: str) -> list[tuple[str, bool]]:
    """Runs of consecutive nouns (compound nouns), each with whether it holds a proper noun."""
    runs: list[tuple[str, bool]] = []
    current: list[str] = []
    proper = False
    for word in Tagger.words(text):
        pos1, pos2 = word.pos1, word.pos2
        joins_names = word.surface in ("・", "＝", "=") and bool(current)  # パブロ・ピカソ is one name
        if (pos1 == _NOUN or joins_names or (pos1 == "接頭辞" and not current)
                or (pos1 == "接尾辞" and current and pos2 == "名詞的")):
            current.append(word.surface)
            proper = proper or pos2 == "固有名詞"
            continue
        if current:
            runs.append(("".join(current).rstrip("・＝="), proper))
        current, proper = [], False
    if current:
        runs.append(("".join(current).rstrip("・＝="), proper))
    return runs


@dataclass(frozen=True, slots=True)
class JoinedPair:
    """Two nouns joined by the particle と (at ``offset`` in the text), and the word after the second one."""

    a: str
    b: str
    after: str  # 「、」「は」「の」「で」..., empty at the end of the text
    offset: int


def _nominal(word: Word) -> bool:
    pos1 = word.pos1
    return (pos1 in (_NOUN, "接頭辞") or (pos1 == "接尾辞" and word.pos2 == "名詞的")
            or word.surface in ("・", "『", "』", "「", "」"))


@dataclass(frozen=True, slots=True)
class ToAnalysis:
    """What the と of a text do: the pairs they join, and the offsets of those that join nothing."""

    pairs: tuple[JoinedPair, ...]
    stray: frozenset[int]


def analyse_to(text: str) -> ToAnalysis:
    """Tags ``text`` once and finds every 「AとB」 where A and B are runs of nouns, and every stray と: inside a word
    (ひとこと, ざっと, とき), before の (「アカリとの会話」), or after a verb, an adjective or an adverb
    (「まとめると」「見ると」). A text without と is not tagged."""
    if "と" not in text:
        return ToAnalysis((), frozenset())
    words = Tagger.words(text)
    offsets: list[int] = []
    offset = 0
    for word in words:
        offset += len(word.white_space)
        offsets.append(offset)
        offset += len(word.surface)
    starts = {start: position for position, start in enumerate(offsets)}
    stray: set[int] = set()
    for k, char in enumerate(text):
        index = starts.get(k) if char == "と" else -1
        if index is None or (index >= 0 and (
                words[index].surface != "と"
                or (index + 1 < len(words) and words[index + 1].surface == "の")
                or (index > 0 and words[index - 1].pos1 in ("動詞", "助動詞", "形容詞", "副詞")))):
            stray.add(k)
    pairs: list[JoinedPair] = []
    for i, word in enumerate(words):
        if word.surface != "と" or word.pos1 != "助詞" or i == 0 or not _nominal(words[i - 1]):
            continue
        start = i - 1
        while start > 0 and _nominal(words[start - 1]):
            start -= 1
        end = i + 1
        while end < len(words) and _nominal(words[end]):
            end += 1
        if end == i + 1 or (end < len(words) and words[end].lemma in ("為る", "出来る")):
            continue  # 「徳間書店と合併して」: B is a verb (合併する), not a second thing
        b_end = offsets[end - 1] + len(words[end - 1].surface)
        after = words[end].surface if end < len(words) else ""
        pairs.append(JoinedPair(text[offsets[start] : offsets[i]], text[offsets[i] + 1 : b_end], after, offsets[i]))
    return ToAnalysis(tuple(pairs), frozenset(stray))
