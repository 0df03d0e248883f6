"""The keyword channel: FTS5 ``bm25`` over the pre-tokenized chunk terms."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from companions.search.tokenize import TokenMode, match_expression, query_terms

# How many chunks hold each of some terms, and how many chunks there are (SearchIndex.term_frequencies).
Frequencies = Callable[[Sequence[str]], tuple[dict[str, int], int]]


def informative_terms(terms: Sequence[str], frequencies: Frequencies) -> Sequence[str]:
    """``terms`` without those that half the chunks or more hold, when a term that is rarer occurs in the index;
    all of them otherwise (a small index, where every term found is that common, is searched as it is).

    FTS5's bm25 gives such a term an IDF of 1e-6 (``log((N - n + 0.5) / (n + 0.5))`` is not positive, and
    fts5_aux.c clamps it there), so it cannot change the order of chunks that hold a rarer term, yet FTS5 still
    scores every chunk that holds it: a query with one bigram found everywhere took 370 ms over 100,000 chunks.
    Terms the vocabulary does not know stay (FTS5 may still match one as a phrase of its tokens).
    """
    counts, chunks = frequencies(terms)
    kept = [t for t in terms if 2 * counts.get(t, 0) < chunks]
    return kept if any(counts.get(t, 0) for t in kept) else terms


def keyword_search(db: sqlite3.Connection, text: str, k: int, mode: TokenMode = "mixed",
                   frequencies: Frequencies | None = None) -> list[tuple[int, float]]:
    """The ``k`` best chunks for ``text`` as (chunk id, bm25 score), higher is better. With ``frequencies``, terms
    that cannot change the ranking are left out of the query (:func:`informative_terms`)."""
    terms = query_terms(text, mode)
    if terms and frequencies is not None:
        terms = tuple(informative_terms(terms, frequencies))
    expression = match_expression(terms)
    if expression is None or k <= 0:
        return []
    # ORDER BY the bm25() column, not FTS5's ``rank``: FTS5 sorts every match by rank before the LIMIT applies,
    # while SQLite keeps only the best k in its sorter (the same scores; ties by rowid). Best of five, loaded
    # machine: a JSQuAD question matching 45,000 of 1,000,000 chunks 97 against 164 ms, a query matching 24,000 of
    # 100,000 45 against 67 ms; one matching 255,000 of 1,000,000 452 ms either way (scoring them is the cost).
    rows = db.execute(
        "SELECT rowid, bm25(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ? "
        "ORDER BY score, rowid LIMIT ?", (expression, k)).fetchall()
    # SQLite's bm25() is "smaller is better" (negative); flip it so every channel ranks by higher = better.
    return [(int(rowid), -float(score)) for rowid, score in rows]
