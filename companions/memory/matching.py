"""The words a question and a remembered line share, whatever form each says them in.

The keyword channel of the search index matches whole words as written, so "Where has Melanie camped?" does not
match "we went camping at the beach", nor "What did Caroline research?" "Researching adoption agencies": such a line
is found by meaning alone, often below lines that merely sound like a question. Recall (app/memory/recall.py)
compares the question's words with each candidate line's again, each reduced to a stem ("camped", "camping" and
"camps" are "camp"), and ranks a line by the share of the question's telling words it holds. Japanese is compared
as the index compares it, in character bigrams (its inflections share their stem's characters).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Final

from companions.search.evidence import idf
from companions.search.tokenize import terms

_KANA_PAIR: Final = re.compile(r"[\u3040-\u309f]{2}")  # "んだ", "てる": in most Japanese lines, telling nothing
_VOWEL: Final = re.compile(r"[aeiouy]")
_DOUBLED: Final = re.compile(r"([bdfgklmnprtz])\1$")  # "swimm" -> "swim", "plann" -> "plan"
# (ending, replacement), the first that fits is taken: "stories" -> "story", "camped" -> "camp", "likes" -> "lik"
_ENDINGS: Final = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))
_KEEP_S: Final = ("ss", "us", "is")  # "class", "famous", "analysis": not plurals
LINE_CACHE: Final = 8192  # lines whose words are kept: a recall reads ~200, and the same lines come back
STEM_CACHE: Final = 65_536  # words whose stems are kept (a stem takes ~1.4 us to find, a kept one ~0.1)


@functools.lru_cache(maxsize=STEM_CACHE)
def stem(word: str) -> str:
    """``word`` without its English inflection ("painted", "painting", "paints" -> "paint"; "likes", "liked",
    "like" -> "lik"), so that forms of one word compare equal; a word of three letters or fewer, or with a digit
    or a letter outside a-z, as it is. Not a dictionary stemmer: two words may meet ("news", "new"), which costs a
    stray match, never a lost one."""
    w = word.lower()
    if w.endswith(("'s", "\u2019s")):
        w = w[:-2]
    if len(w) <= 3 or not (w.isascii() and w.isalpha()):
        return w
    for ending, replacement in _ENDINGS:
        if w.endswith(ending):
            if ending == "s" and w.endswith(_KEEP_S):
                break
            base = w[: -len(ending)] + replacement
            if len(base) >= 3 and _VOWEL.search(base):
                w = base
            break
    if len(w) > 3 and _DOUBLED.search(w):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


@functools.lru_cache(maxsize=LINE_CACHE)
def telling_words(text: str) -> frozenset[str]:
    """The words of ``text`` that can tell a line apart: the index's terms (stop words out; Japanese in bigrams)
    without kana-only bigrams, English ones stemmed. A line not read before takes ~10 us (100,000 stored lines:
    most of a recall's ~200 candidates are new to it)."""
    found = terms(text, "bigram")
    if text.isascii():
        return frozenset(map(stem, found))
    return frozenset(stem(t) if t.isascii() else t for t in found if not _KANA_PAIR.fullmatch(t))


def shared_words(question: frozenset[str], lines: Mapping[int, frozenset[str]]) -> dict[int, float]:
    """For each line (by key), the share of ``question``'s words it holds, each word weighted by how rare it is
    among ``lines`` (BM25's inverse document frequency): 1.0 holds them all, 0.0 none. ``lines`` are the
    candidates of one recall, so a word in most of them (the speaker's name, "time") counts little."""
    if not question or not lines:
        return {}
    n = len(lines)
    counts = dict.fromkeys(question, 0)
    for words in lines.values():
        for word in question & words:
            counts[word] += 1
    weight = {w: idf(c, n) for w, c in counts.items()}
    total = sum(weight.values())
    return {key: sum(weight[w] for w in question & words) / total for key, words in lines.items()}


def asks(text: str) -> bool:
    """Whether a line asks (ends with a question mark): it tells little itself; its answer, next to it, tells."""
    return text.rstrip().endswith(("?", "\uff1f"))
