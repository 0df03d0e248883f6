"""The keyword channel: FTS5 ``bm25`` over the pre-tokenized chunk terms."""

from __future__ import annotations

import sqlite3

from companions.search.tokenize import TokenMode, match_expression


def keyword_search(db: sqlite3.Connection, text: str, k: int, mode: TokenMode = "mixed") -> list[tuple[int, float]]:
    """The ``k`` best chunks for ``text`` as (chunk id, bm25 score), higher is better."""
    expression = match_expression(text, mode)
    if expression is None or k <= 0:
        return []
    rows = db.execute(
        "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
        (expression, k)).fetchall()
    # SQLite's bm25() is "smaller is better" (negative); flip it so every channel ranks by higher = better.
    return [(int(rowid), -float(score)) for rowid, score in rows]
