"""Closing stages and the repetition detector that pushes a runaway conversation toward its end.

The detector needs no LLM: it compares character n-grams of the recent messages (Dice coefficient over n-gram
multisets). Text is NFKC-normalised and lower-cased, punctuation and spaces are dropped; Japanese and Chinese
text (no spaces between words, one character carries much meaning) uses bigrams, other text trigrams.
"""

from __future__ import annotations

import collections
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from companions.wire.protocol import CLOSING_ORDER, Closing

# "model-failed": the language model did not answer (unreachable, gone, too slow, refusing); "failed": anything
# else went wrong. "stopped" and "interrupted" are the user's own doing, never a problem.
EndReason: TypeAlias = Literal["closed", "no-speaker", "turn-cap", "stopped", "interrupted", "no-addressee",
                               "model-failed", "failed", "spoke-first"]
END_REASONS: Final[tuple[EndReason, ...]] = (
    "closed", "no-speaker", "turn-cap", "stopped", "interrupted", "no-addressee", "model-failed", "failed",
    "spoke-first",  # a companion spoke first on an occasion (speaking_first.py) and waits for the user
)


def stage_index(stage: Closing) -> int:
    return CLOSING_ORDER.index(stage)


def later_stage(a: Closing, b: Closing) -> Closing:
    """The more closed of two stages."""
    return a if stage_index(a) >= stage_index(b) else b


# Hiragana and katakana, CJK extension A, unified and compatibility ideographs, hangul syllables, half-width
# katakana (NFKC folds most of them anyway). A character class: counting them is one C loop, not one call a character.
_CJK: Final = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]")
# What ``str.isalnum`` rejects: re's Unicode ``\w`` is exactly ``isalnum()`` or the underscore.
_NOT_ALNUM: Final = re.compile(r"[\W_]+")
MAX_CHARS: Final = 2000  # longer messages are compared on their first 2000 characters: bounded work on the loop


def normalize(text: str) -> str:
    """NFKC, lower case, letters and digits only (punctuation, symbols and spaces carry no repetition)."""
    folded = unicodedata.normalize("NFKC", text[: MAX_CHARS * 2]).lower()
    return _NOT_ALNUM.sub("", folded)[:MAX_CHARS]


def _mostly_cjk(norm: str) -> bool:
    return bool(norm) and len(_CJK.findall(norm)) * 3 >= len(norm)


def is_mostly_cjk(text: str) -> bool:
    return _mostly_cjk(normalize(text))


def _ngrams(norm: str, n: int) -> Counter[str]:
    if len(norm) < n:
        return Counter([norm]) if norm else Counter()
    return Counter(norm[i:i + n] for i in range(len(norm) - n + 1))


class Fingerprint:
    """A message prepared once for comparisons: normalised text, script, and n-gram counts per size."""

    __slots__ = ("_grams", "cjk", "norm")

    def __init__(self, text: str) -> None:
        self.norm = normalize(text)
        self.cjk = _mostly_cjk(self.norm)
        self._grams: dict[int, Counter[str]] = {}

    def grams(self, n: int) -> Counter[str]:
        grams = self._grams.get(n)
        if grams is None:
            grams = self._grams[n] = _ngrams(self.norm, n)
        return grams

    def total(self, n: int) -> int:
        """How many n-grams of size ``n`` the text has (with repeats)."""
        norm = len(self.norm)
        return norm - n + 1 if norm >= n else min(norm, 1)


def fingerprint_similarity(a: Fingerprint, b: Fingerprint) -> float:
    if not a.norm or not b.norm:
        return 0.0
    if a.norm == b.norm:
        return 1.0
    n = 2 if a.cjk or b.cjk else 3
    ga, gb = a.grams(n), b.grams(n)
    total = a.total(n) + b.total(n)
    if total == 0:
        return 0.0
    # The multiset intersection's size, without building it (``Counter.__and__`` costs ~5x more: every turn
    # compares the new line with the whole window on the loop); the shared grams are found by a set intersection.
    shared = sum(min(ga[gram], gb[gram]) for gram in ga.keys() & gb.keys())
    return 2.0 * shared / total


def similarity(a: str, b: str) -> float:
    """Character n-gram Dice similarity in 0..1 (1.0 for the same normalised text)."""
    return fingerprint_similarity(Fingerprint(a), Fingerprint(b))


@dataclass(frozen=True)
class RepetitionReport:
    """After one message: its best similarity to the window, and the stage the conversation is pushed to."""

    similarity: float
    repeats: int
    pressure: Closing


class RepetitionDetector:
    """Counts recent messages that repeat an earlier one and maps the count to a closing stage.

    A message is a repeat when its similarity to one of the previous ``window`` messages reaches ``threshold``.
    The number of repeats among the last ``window`` messages pushes the conversation: 1 -> pre-closing,
    2 -> closing, ``terminal_after`` or more -> terminal.
    """

    def __init__(self, *, window: int = 6, threshold: float = 0.6, terminal_after: int = 3) -> None:
        if window < 1 or terminal_after < 3:
            raise ValueError("window must be >= 1 and terminal_after >= 3")
        self.window = window
        self.threshold = threshold
        self.terminal_after = terminal_after
        self._texts: collections.deque[Fingerprint] = collections.deque(maxlen=window)
        self._flags: collections.deque[bool] = collections.deque(maxlen=window)

    def reset(self) -> None:
        self._texts.clear()
        self._flags.clear()

    @property
    def pressure(self) -> Closing:
        repeats = sum(self._flags)
        if repeats >= self.terminal_after:
            return "terminal"
        if repeats >= 2:
            return "closing"
        if repeats >= 1:
            return "pre-closing"
        return "none"

    def observe(self, text: str) -> RepetitionReport:
        new = Fingerprint(text)
        best = max((fingerprint_similarity(new, old) for old in self._texts), default=0.0)
        self._texts.append(new)
        self._flags.append(best >= self.threshold)
        return RepetitionReport(similarity=best, repeats=sum(self._flags), pressure=self.pressure)
