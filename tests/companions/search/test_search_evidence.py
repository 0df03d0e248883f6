"""Sentence evidence: among close hits, the chunk with one sentence answering the question comes first."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from companions.search.evidence import best_sentence_share, idf, rerank
from companions.search.fusion import Fused
from companions.search.index import SearchIndex

# Two paragraphs of one article: the same words, but only B says in one sentence who founded the company when.
A = "ソニーは東京に本社を置く。創業者の一人は技術者だった。設立の年には多くの会社が生まれた。"
B = "ソニーは東京に本社を置く。ソニーは1946年に井深大と盛田昭夫が創業者として設立した。"
QUESTION = "ソニーを1946年に設立した創業者は誰？"


def _frequencies(terms: Sequence[str]) -> tuple[dict[str, int], int]:
    return {}, 100  # every term equally rare


def test_the_best_sentence_holds_most_of_the_query() -> None:
    weights = {"ソニ": 1.0, "創業": 1.0, "設立": 1.0, "1946": 2.0}
    assert best_sentence_share(weights, B) == pytest.approx(1.0)
    # A holds every term but 1946, one per sentence: its best sentence has a fifth of the weight.
    assert best_sentence_share(weights, A) == pytest.approx(0.2)
    assert best_sentence_share({"founded": 1.0, "sony": 1.0}, "Sony makes TVs. Sony was founded in 1946.") == 1.0
    assert best_sentence_share({"art": 1.0}, "We had a party.") == 0.0  # a Latin term counts as a whole word
    assert best_sentence_share({"sony": 1.0}, "ＳＯＮＹ was founded.") == 1.0  # NFKC, case
    assert best_sentence_share({}, B) == 0.0


def test_close_hits_are_reordered_by_their_best_sentence_and_scores_stay_in_0_1() -> None:
    fused = [Fused(1, 1.0), Fused(2, 0.97), Fused(3, 0.5)]
    texts = {1: A, 2: B, 3: "東京の天気は晴れ。"}
    out = rerank(fused, QUESTION, texts.get, _frequencies)
    assert [f.chunk_id for f in out] == [2, 1, 3]
    assert out[0].score == 1.0
    assert all(0.0 <= f.score <= 1.0 for f in out)


def test_a_clear_winner_keeps_its_place_and_the_tail_keeps_its_order() -> None:
    fused = [Fused(1, 1.0), Fused(2, 0.2)] + [Fused(i, 0.19 - i / 1000) for i in range(3, 14)]
    texts = {1: A, 2: B} | {i: "関係のない文章。" for i in range(3, 14)}
    out = rerank(fused, QUESTION, texts.get, _frequencies)
    assert out[0].chunk_id == 1  # evidence moves a hit by a few hundredths at most
    assert [f.chunk_id for f in out[10:]] == [11, 12, 13]
    assert [f.score for f in out] == sorted((f.score for f in out), reverse=True)


def test_missing_texts_and_single_hits_are_left_alone() -> None:
    assert [f.chunk_id for f in rerank([Fused(5, 1.0)], QUESTION, {}.get, _frequencies)] == [5]
    out = rerank([Fused(1, 1.0), Fused(2, 0.9)], QUESTION, {}.get, _frequencies)
    assert [f.chunk_id for f in out] == [1, 2]


def test_term_frequencies_come_from_the_index(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "s.sqlite3", None, token_mode="mixed")
    try:
        index.upsert("a.txt", A)
        index.upsert("b.txt", B)
        counts, documents = index.term_frequencies(["ソニ", "1946", "盛田", "存在しない"])
        assert documents == 2
        assert counts == {"ソニ": 2, "1946": 1, "盛田": 1}
        index.remove("a.txt")
        assert index.term_frequencies(["ソニ"]) == ({"ソニ": 1}, 1)
    finally:
        index.close()
    assert idf(1, 2) > idf(2, 2) >= 0
