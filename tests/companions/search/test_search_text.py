"""Tokenization, chunking and entity extraction: the text handling every channel rests on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from companions.search.graph import EntityGraph, entity_key, extract_heuristic
from companions.search.index import SearchIndex, split_chunks
from companions.search.keyword import informative_terms, keyword_search
from companions.search.tokenize import match_expression, query_terms, terms


def test_japanese_is_split_into_bigrams_and_words_and_latin_is_normalised() -> None:
    out = terms("東京タワーはＡＢＣ放送の電波塔です")
    assert "東京" in out
    assert "電波" in out
    assert "w東京タワー" in out  # the dictionary's word (a proper noun in Open JTalk's), kept apart from bigrams
    assert "abc" in out  # full-width letters folded and lower-cased
    assert "は" not in out
    assert terms("The Analytical Engine", "bigram") == ["analytical", "engine"]


def test_match_expression_is_safe_for_fts5_syntax() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(terms)")
    db.execute("INSERT INTO t(rowid, terms) VALUES (1, 'near or and not')")
    for hostile in ['"; DROP TABLE t; --', "NEAR(a b) OR", 'a" OR "b', "*", "(((", "AND OR NOT"]:
        expression = match_expression(query_terms(hostile))
        if expression is not None:
            db.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()
    assert match_expression(query_terms("。、？")) is None


def test_chunks_pack_paragraphs_and_cut_long_ones_at_sentences() -> None:
    text = "短い段落。\n\n" + "長い文です。" * 200 + "\n\nlast"
    chunks = split_chunks(text, max_chars=100)
    assert all(len(c) <= 100 for c in chunks)
    assert chunks[0].startswith("短い段落。")
    assert chunks[-1].endswith("last")
    assert "".join(c.replace("\n\n", "") for c in chunks).count("長い文です。") == 200


def test_heuristic_extraction_finds_entities_and_relations_in_both_languages() -> None:
    ja = extract_heuristic("千利休は織田信長と豊臣秀吉に仕えた。")
    assert {"千利休", "織田信長", "豊臣秀吉"} <= set(ja.entities)
    assert ("千利休", "豊臣秀吉", "co-occurs") in ja.relations or ("豊臣秀吉", "千利休", "co-occurs") in ja.relations
    en = extract_heuristic("The Bombe was designed by Alan Turing at Bletchley Park. What a machine.")
    assert {"Bombe", "Alan Turing", "Bletchley Park"} <= set(en.entities)
    assert "What" not in en.entities
    assert entity_key("Open AI") == entity_key("openai")


def test_personalized_pagerank_prefers_neighbours_of_the_seed() -> None:
    graph = EntityGraph.build([1, 2, 3, 4, 5], [(1, 2, 1.0), (2, 3, 1.0), (4, 5, 1.0)])
    ranks = graph.personalized_pagerank([1])
    assert ranks[1] > ranks[2] > ranks[3]
    assert 4 not in ranks
    assert set(graph.personalized_pagerank([1], top=2)) == {1, 2}
    communities = graph.communities()
    assert communities[1] == communities[2] == communities[3]
    assert communities[4] == communities[5] != communities[1]


def test_terms_that_half_the_chunks_hold_are_not_searched_and_the_ranking_stays(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "search.sqlite3", token_mode="bigram")
    texts = [f"記録{i}: 天気の話をした。" for i in range(8)]  # "天気" (and its neighbours) in every chunk
    texts[2] = "記録2: 天気の話のあと、灯台守の日誌を読んだ。"
    texts[5] = "記録5: 灯台の灯りを数えた。天気の話をした。"
    for i, text in enumerate(texts):
        index.upsert(f"note{i}", text, title=f"note{i}")
    source = {r.id: r.source for r in index.chunks(list(range(1, 20))).values()}

    def ranked(query: str, pruned: bool) -> list[str]:
        hits = keyword_search(index.db, query, 8, "bigram", index.term_frequencies if pruned else None)
        return [source[chunk_id] for chunk_id, _ in hits]

    plain, pruned = ranked("灯台の天気", False), ranked("灯台の天気", True)
    assert len(plain) == 8  # every chunk holds 天気, so FTS5 scored all of them
    assert sorted(pruned) == ["note2", "note5"]  # only the chunks with 灯台 (or 台の) ...
    assert pruned == plain[:2]  # ... in the order they had
    assert informative_terms(query_terms("灯台の天気", "bigram"), index.term_frequencies) == ["灯台", "台の", "の天"]
    # a query of nothing but such terms is searched as it is
    assert len(ranked("天気の話", True)) == 8
    index.close()


def test_a_small_index_is_searched_with_every_term(tmp_path: Path) -> None:
    # One note: every word of it is in "half the chunks or more"; none may be left out, or nothing is found.
    index = SearchIndex(tmp_path / "search.sqlite3", token_mode="bigram")
    index.upsert("memo.md", "光合成は葉緑体で行われ、光エネルギーを化学エネルギーに変える。", title="memo")
    index.upsert("other.md", "明日は雨が降るらしい。", title="other")
    every = query_terms("光合成はどこで行われる？", "bigram")
    assert list(informative_terms(every, index.term_frequencies)) == list(every)
    hits = keyword_search(index.db, "光合成はどこで行われる？", 5, "bigram", index.term_frequencies)
    assert [index.chunks([c])[c].source for c, _ in hits] == ["memo.md"]
    index.close()
