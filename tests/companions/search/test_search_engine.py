"""The hybrid search engine on the sample knowledge documents (ja + en), with a real SQLite file."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from companions.search.classify.query_classifier import EmptyQueryError
from companions.search.engine import SearchEngine
from companions.search.fusion import (
    DEFAULT_FUSION,
    calibrated_score_fusion,
    normalised_score_fusion,
    reciprocal_rank_fusion,
)
from companions.search.index import IndexedLine, SearchIndex, Upsert
from tests.companions.search_doubles import HashingEmbedder

KNOWLEDGE = Path(__file__).resolve().parents[3] / "resources" / "knowledge"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    shutil.copytree(KNOWLEDGE, folder)
    return folder


@pytest.fixture
async def engine(tmp_path: Path, docs: Path):  # type: ignore[no-untyped-def]
    embedder = HashingEmbedder()
    eng = SearchEngine(tmp_path / "search.sqlite3", embedder=embedder)
    changes = await eng.index_paths([docs])
    assert sorted(changes.values()) == ["added"] * 4
    yield eng
    await eng.aclose()


def names(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [Path(h.source).name for h in response.hits]


async def test_japanese_local_question_finds_its_document_with_every_channel_scored(engine: SearchEngine) -> None:
    response = await engine.search("金閣寺を建てたのは誰ですか", limit=3)
    assert response.classification.type == "local"
    top = response.hits[0]
    assert Path(top.source).name == "kyoto-temples.ja.md"
    assert "金閣寺" in top.snippet
    assert set(top.channel_scores) == {"keyword", "semantic", "graph"}
    assert top.score > response.hits[-1].score


async def test_english_local_question(engine: SearchEngine) -> None:
    response = await engine.search("Who designed the Analytical Engine?", limit=3)
    assert names(response)[0] == "computing-pioneers.en.md"
    assert "keyword" in response.hits[0].channel_scores


async def test_relationship_query_reaches_both_entities_through_the_graph(engine: SearchEngine) -> None:
    response = await engine.search("千利休と豊臣秀吉の関係は？", limit=3)
    assert response.classification.type == "relationship"
    assert names(response)[0] == "tea-ceremony.ja.md"
    graph = response.channels["graph"]
    assert graph, "the graph channel found nothing for two known entities"
    en = await engine.search("What is the relationship between Ada Lovelace and Alan Turing?", limit=3)
    assert en.classification.type == "relationship"
    assert names(en)[0] == "computing-pioneers.en.md"
    assert en.hits[0].channel_scores.get("graph", 0) > 0


async def test_global_query_uses_community_summaries(engine: SearchEngine) -> None:
    for query in ("この資料全体のテーマは何ですか", "What are the main topics of these documents?"):
        response = await engine.search(query, limit=5)
        assert response.classification.type == "global"
        assert response.communities, query
        assert all(c.summary for c in response.communities)
        assert response.channels["graph"]
    summaries = " ".join(c.summary for c in await engine.communities())
    assert "足利義満" in summaries or "千利休" in summaries
    assert "Turing" in summaries or "Lovelace" in summaries


async def test_editing_and_deleting_files_updates_only_their_chunks(engine: SearchEngine, docs: Path,
                                                                   tmp_path: Path) -> None:
    embedder = engine._embedder
    assert isinstance(embedder, HashingEmbedder)
    before = len(embedder.embedded_texts())
    assert set((await engine.index_paths([docs])).values()) == {"unchanged"}
    assert len(embedder.embedded_texts()) == before  # nothing re-embedded

    tea = docs / "tea-ceremony.ja.md"
    tea.write_text(tea.read_text(encoding="utf-8") + "\n\n北野大茶湯は1587年に豊臣秀吉が催した大規模な茶会である。\n",
                   encoding="utf-8")
    changes = await engine.index_paths([docs])
    assert changes[str(tea)] == "updated"
    assert [c for c in changes.values() if c != "unchanged"] == ["updated"]
    new_texts = embedder.embedded_texts()[before:]
    assert len(new_texts) == 1  # the unchanged paragraphs kept their vectors
    assert "北野大茶湯" in new_texts[0]
    assert names(await engine.search("北野大茶湯はいつ開かれた？", limit=1)) == ["tea-ceremony.ja.md"]

    (docs / "madoi.en.md").unlink()
    changes = await engine.index_paths([docs])
    assert changes[str(docs / "madoi.en.md")] == "removed"
    response = await engine.search("Madoi desktop application companions", limit=5)
    assert "madoi.en.md" not in names(response)
    stats = await engine.stats()
    assert stats["documents"] == 3
    with sqlite3.connect(tmp_path / "search.sqlite3") as db:  # no orphans: chunks, FTS rows, mentions all cascade
        def count(sql: str) -> int:
            return int(db.execute(sql).fetchone()[0])

        assert count("SELECT COUNT(*) FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)") == 0
        assert count("SELECT COUNT(*) FROM chunks_fts") == stats["chunks"]
        assert count("SELECT COUNT(*) FROM mentions WHERE chunk_id NOT IN (SELECT id FROM chunks)") == 0
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_conversations_are_searchable(engine: SearchEngine) -> None:
    lines = [
        IndexedLine("m1", "user", 1_700_000_000.0, "user: 来週の金曜日に嵐山へ紅葉を見に行きたい"),
        IndexedLine("m2", "hana", 1_700_000_060.0, "hana: いいですね！嵐山なら渡月橋もおすすめです"),
    ]
    assert await engine.index_conversation("c-1", lines) == "added"
    assert await engine.index_conversation("c-1", lines) == "unchanged"
    response = await engine.search("紅葉を見に行く予定はどこ？", limit=3)
    assert response.hits[0].source == "conversation:c-1"
    assert response.hits[0].kind == "conversation"
    assert response.hits[0].text == "user: 来週の金曜日に嵐山へ紅葉を見に行きたい"  # each line a chunk of its own


async def test_blocking_work_runs_off_the_event_loop(tmp_path: Path, docs: Path) -> None:
    embedder = HashingEmbedder()
    engine = SearchEngine(tmp_path / "s.sqlite3", embedder=embedder)
    try:
        await engine.index_paths([docs])
        await engine.search("茶の湯", limit=1)
    finally:
        await engine.aclose()
    assert threading.current_thread().name not in embedder.threads
    assert all(t.startswith("search-index") for t in embedder.threads)
    with pytest.raises(RuntimeError):
        await engine.search("茶の湯")


async def test_bad_input_is_a_clear_error_and_the_engine_keeps_working(engine: SearchEngine) -> None:
    with pytest.raises(EmptyQueryError):
        await engine.search("   ")
    nothing = await engine.search("zzzzqqqq xyzzy", limit=3)
    assert all("keyword" not in h.channel_scores for h in nothing.hits)
    assert (await engine.search("茶室", limit=1)).hits


async def test_without_an_embedder_the_semantic_channel_is_left_out(tmp_path: Path, docs: Path) -> None:
    engine = SearchEngine(tmp_path / "plain.sqlite3")
    try:
        await engine.index_paths([docs])
        response = await engine.search("銀閣寺はどこにありますか", limit=2)
    finally:
        await engine.aclose()
    assert names(response)[0] == "kyoto-temples.ja.md"
    assert response.channels["semantic"] == []


async def test_concurrent_searches_share_one_connection_safely(engine: SearchEngine) -> None:
    queries = ["金閣寺", "千利休", "Alan Turing", "Enigma", "銀閣寺", "Madoi"] * 3
    results = await asyncio.gather(*(engine.search(q, limit=1) for q in queries))
    assert all(r.hits for r in results)


def test_both_fusions_rank_an_item_found_by_every_channel_first() -> None:
    rankings = {"keyword": [(1, 9.0), (2, 5.0)], "semantic": [(2, 0.9), (1, 0.8), (3, 0.1)], "graph": [(1, 0.4)]}
    weights = {"keyword": 0.35, "semantic": 0.35, "graph": 0.3}
    for fuse in (reciprocal_rank_fusion, normalised_score_fusion, calibrated_score_fusion):
        fused = fuse(rankings, weights)
        assert [f.chunk_id for f in fused] == [1, 2, 3]
        assert fused[0].channel_scores == {"keyword": 9.0, "semantic": 0.8, "graph": 0.4}
        # A zero-weight channel changes nothing.
        only_kw = fuse(rankings, {"keyword": 1.0})
        assert [f.chunk_id for f in only_kw][:2] == [1, 2]


def test_calibrated_fusion_trusts_the_channel_whose_first_hit_stands_out() -> None:
    # The keyword channel puts chunk 1 far ahead of the rest (bm25 10 against 5 and below); the semantic channel's
    # cosines lie within 0.02 of each other, chunk 2 barely first and chunk 1 last. Min-max stretches both to
    # [0, 1], so the semantic channel's tiny differences count as much as the keyword channel's clear one and
    # chunk 2 wins; ranks (RRF) cannot tell either. The z-score sees that only chunk 1 stands out anywhere.
    keyword = [(1, 10.0), (2, 5.0)] + [(i, 5.0 - 0.05 * (i - 2)) for i in range(3, 20)]
    semantic = [(2, 0.842)] + [(i, 0.841 - 0.001 * (i - 3)) for i in range(3, 20)] + [(1, 0.820)]
    rankings = {"keyword": keyword, "semantic": semantic}
    weights = {"keyword": 0.5, "semantic": 0.5}
    assert normalised_score_fusion(rankings, weights)[0].chunk_id == 2
    fused = calibrated_score_fusion(rankings, weights)
    assert [f.chunk_id for f in fused[:2]] == [1, 2]
    assert fused[0].score == 1.0  # rescaled to [0, 1]: the best scores 1
    assert 0.0 <= fused[-1].score < fused[0].score
    assert DEFAULT_FUSION == "zscore"


def test_upsert_many_embeds_the_chunks_of_several_documents_in_one_call(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    index = SearchIndex(tmp_path / "batch.sqlite3", embedder)
    try:
        changes = index.upsert_many([Upsert("a", "金閣寺は京都にある。"), Upsert("b", "Turing broke Enigma.")])
        assert changes == ["added", "added"]
        assert len([c for c in embedder.calls if not c[1]]) == 1  # one batch for both documents
        assert index.upsert_many([Upsert("a", "金閣寺は京都にある。"), Upsert("b", "Turing met Church.")]) == [
            "unchanged", "updated"]
        assert index.stats()["documents"] == 2
        with pytest.raises(ValueError, match="each source at most once"):
            index.upsert_many([Upsert("a", "x"), Upsert("a", "y")])
    finally:
        index.close()


async def test_a_chat_model_extracts_the_graph_and_failures_fall_back_to_heuristics(tmp_path: Path) -> None:
    from companions.llm.scripted import ScriptedModel, fail, reply_json

    model = ScriptedModel("extractor")
    model.lane("entity_extraction").add(
        reply_json({"entities": ["quiet fox", "old mill"],
                    "relations": [{"source": "quiet fox", "target": "old mill", "label": "lives near"}]}),
        fail("server down", status=503),
    )
    engine = SearchEngine(tmp_path / "llm.sqlite3", embedder=HashingEmbedder(), chat_model=model)
    try:
        await engine.index_text("notes://fox", "the quiet fox sleeps all day beside the old mill.")
        await engine.index_text("notes://ships", "Tall ships sailed from Lisbon to Goa.")
        model.assert_used_up()
        fox = await engine.search("what is the relationship between the quiet fox and the old mill?", limit=1)
        ships = await engine.search("Lisbon", limit=1)
    finally:
        await engine.aclose()
    assert fox.hits[0].source == "notes://fox"
    assert fox.hits[0].channel_scores.get("graph", 0) > 0  # only the model knew these lowercase names
    assert ships.hits[0].channel_scores.get("graph", 0) > 0  # heuristics found "Lisbon" after the failure
