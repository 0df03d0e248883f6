"""Tokenization, chunking and entity extraction: the text handling every channel rests on."""

from __future__ import annotations

import sqlite3

from companions.search.graph import EntityGraph, entity_key, extract_heuristic
from companions.search.index import split_chunks
from companions.search.tokenize import match_expression, terms


def test_japanese_is_split_into_bigrams_and_words_and_latin_is_normalised() -> None:
    out = terms("東京タワーはＡＢＣ放送の電波塔です")
    assert "東京" in out
    assert "電波" in out
    assert "wタワー" in out  # the fugashi word, kept apart from bigrams
    assert "abc" in out  # full-width letters folded and lower-cased
    assert "は" not in out
    assert terms("The Analytical Engine", "bigram") == ["analytical", "engine"]


def test_match_expression_is_safe_for_fts5_syntax() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(terms)")
    db.execute("INSERT INTO t(rowid, terms) VALUES (1, 'near or and not')")
    for hostile in ['"; DROP TABLE t; --', "NEAR(a b) OR", 'a" OR "b', "*", "(((", "AND OR NOT"]:
        expression = match_expression(hostile)
        if expression is not None:
            db.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()
    assert match_expression("。、？") is None


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
