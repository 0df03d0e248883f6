"""Japanese-aware tokenization for the FTS5 keyword index.

FTS5's own tokenizers split Japanese text into whole runs of kana/kanji (unicode61) or need the trigram tokenizer,
which cannot match two-character words. Text is therefore pre-tokenized in Python into space-separated terms and
indexed with ``unicode61``. Two term families are produced:

* character bigrams of every CJK run (robust to unknown words and segmentation errors), and
* morphological words from MeCab over Open JTalk's dictionary when it is installed (companions/common/morphology.py;
  sharper matches for longer words), with particles and punctuation dropped.

Latin text is split on word boundaries and lower-cased. The same function tokenizes documents and queries.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Literal, TypeAlias

from companions.common import morphology

TokenMode: TypeAlias = Literal["bigram", "words", "mixed"]

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f々〆ー"
# A run of CJK characters or a Latin word (with one apostrophe part); IS_CJK tells the two apart.
RUN = re.compile(rf"[{_CJK}]+|[0-9A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)?")
IS_CJK = re.compile(rf"[{_CJK}]")
# Parts of speech that carry no searchable meaning (particles, auxiliaries, symbols, blanks).
_SKIP_POS = frozenset({"助詞", "助動詞", "補助記号", "記号", "空白"})
EN_STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from", "is", "are",
    "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "what", "which", "who",
    "whom", "whose", "when", "where", "why", "how", "do", "does", "did", "can", "could", "will", "would",
    "should", "may", "might", "as", "into", "about", "than", "then", "there", "their", "they", "them", "he",
    "she", "his", "her", "we", "our", "you", "your", "i", "me", "my", "not", "no"
})

def _tagger() -> object | None:
    """This thread's MeCab tagger (its words in UniDic's categories); None when pyopenjtalk-plus is unavailable."""
    return morphology.tagger()


def normalize(text: str) -> str:
    """NFKC (full-width ASCII to half-width, half-width kana to full-width) and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def _bigrams(run: str) -> Iterator[str]:
    if len(run) == 1:
        yield run
        return
    for i in range(len(run) - 1):
        yield run[i : i + 2]


def words(text: str) -> list[str]:
    """Content words of ``text``: MeCab's words for Japanese (particles dropped), lower-cased Latin words."""
    text = normalize(text)
    tagger = _tagger()
    out: list[str] = []
    if tagger is None or not IS_CJK.search(text):
        return [w for w in RUN.findall(text) if w not in EN_STOPWORDS]
    for node in tagger(text):  # type: ignore[operator]
        surface = str(node.surface)
        pos = str(getattr(node.feature, "pos1", "") or "")
        if pos in _SKIP_POS or not RUN.fullmatch(surface):
            continue
        if surface in EN_STOPWORDS:
            continue
        out.append(surface)
    return out


def terms(text: str, mode: TokenMode = "mixed") -> list[str]:
    """The index terms of ``text`` (with repeats, so that term frequency counts)."""
    norm = normalize(text)
    out: list[str] = []
    if mode in ("bigram", "mixed"):
        for run in RUN.findall(norm):
            if IS_CJK.match(run):
                out.extend(_bigrams(run))
            elif run not in EN_STOPWORDS:
                out.append(run)
    if mode in ("words", "mixed"):
        # Words are prefixed so that a one-word match and a bigram with the same letters stay distinct terms.
        ws = words(norm)
        if mode == "words":
            out.extend(ws)
        else:
            out.extend("w" + w for w in ws if IS_CJK.search(w) and len(w) > 2)
    return out


def index_text(text: str, mode: TokenMode = "mixed") -> str:
    """``text`` as the space-separated term string stored in the FTS5 column."""
    return " ".join(terms(text, mode))


@lru_cache(maxsize=4096)
def query_terms(text: str, mode: TokenMode = "mixed") -> tuple[str, ...]:
    """The distinct index terms of a free-text query, in order of appearance."""
    return tuple(dict.fromkeys(terms(text, mode)))


def match_expression(query: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression (OR of quoted terms) for a query's terms; None when there are none."""
    if not query:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in query)
