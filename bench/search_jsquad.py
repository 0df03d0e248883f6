"""JSQuAD retrieval: Recall@1/@10 and MRR@10 per channel and for both fusions, latency, indexing throughput.

Every paragraph of JSQuAD v1.3 validation is one document; every question is a query whose gold document is the
paragraph holding it. Baseline (same run): SQLite FTS5 over character bigrams, the keyword channel alone.
Every figure is printed for all questions and for two halves: the questions of even-numbered paragraphs (the split
the fusion was tuned on) and of odd-numbered ones (held out).

The index is incremental: a second run over the same ``--work`` directory reuses it (only the query figures are
measured); ``--fresh`` deletes it first to measure indexing throughput.
Data: JGLUE JSQuAD (Kurihara, Kawahara and Shibata, "JGLUE: Japanese General Language Understanding Evaluation",
LREC 2022), CC BY-SA 4.0.

Usage: python bench/search_jsquad.py [--data PATH] [--work DIR] [--limit N] [--fresh]
                                     [--float32]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from _report import report

from app.search.embedding import E5Embedder
from companions.common.loop_health import percentile
from companions.search.classify.query_classifier import RuleBasedClassifier
from companions.search.engine import SearchCore, weights_for
from companions.search.evidence import RERANK_DEPTH
from companions.search.fusion import DEFAULT_FUSION, FUSION_METHODS, fuse
from companions.search.index import Upsert

BATCH = 16  # documents per upsert_many call (their chunks are embedded in one batch)
SPLITS = ("all", "even", "odd")

DATA = Path("/work/shared/data/jsquad-valid-v1.3.json")


def load(path: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(source, paragraph) per paragraph and (question, gold source) per question."""
    data = json.loads(path.read_text(encoding="utf-8"))
    docs, questions = [], []
    for article in data["data"]:
        for i, para in enumerate(article["paragraphs"]):
            source = f"jsquad:{article['title']}#{i}"
            docs.append((source, para["context"].replace(" [SEP] ", "\n\n", 1)))
            questions += [(qa["question"], source) for qa in para["qas"]]
    return docs, questions


def metrics(ranked: list[list[str]], gold: list[str], keep: list[bool] | None = None) -> tuple[float, float, float]:
    r1 = r10 = mrr = 0.0
    n = 0
    for i, (sources, g) in enumerate(zip(ranked, gold, strict=True)):
        if keep is not None and not keep[i]:
            continue
        n += 1
        top = list(dict.fromkeys(sources))[:10]
        if g in top:
            rank = top.index(g) + 1
            r1 += rank == 1
            r10 += 1
            mrr += 1 / rank
    n = max(n, 1)
    return r1 / n, r10 / n, mrr / n


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, default=Path("/tmp/madoi-bench-jsquad"),
                        help="where the indexes live; reused (incrementally) by the next run")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions (0 = all)")
    parser.add_argument("--fresh", action="store_true", help="delete the indexes first (measures indexing)")
    parser.add_argument("--float32", action="store_true",
                        help="the float32 onnxruntime encoder (slower; the int8 one's baseline)")
    args = parser.parse_args()
    docs, questions = load(args.data)
    if args.limit:
        questions = questions[: args.limit]
    if args.fresh:
        for file in args.work.glob("*.sqlite3*"):
            file.unlink()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"JSQuAD v1.3 validation (JGLUE, Kurihara et al. 2022): {len(docs)} paragraphs, {len(questions)} questions",
          flush=True)

    baseline = SearchCore(args.work / "bigram.sqlite3", None, token_mode="bigram")
    baseline.index.extractor = None
    t0 = time.perf_counter()
    base_changed = sum(baseline.index.upsert(source, text) != "unchanged" for source, text in docs)
    base_index_s = time.perf_counter() - t0

    embedder = E5Embedder(precision="float32" if args.float32 else "int8")
    core = SearchCore(args.work / "hybrid.sqlite3", embedder, token_mode="mixed")
    t0 = time.perf_counter()
    changed = 0
    for start in range(0, len(docs), BATCH):
        batch = [Upsert(source, text) for source, text in docs[start : start + BATCH]]
        changed += sum(c != "unchanged" for c in core.index.upsert_many(batch))
    index_s = time.perf_counter() - t0
    if changed == len(docs) and base_changed == len(docs):
        report("index throughput (fts+vectors+graph)", len(docs) / index_s, "docs/s",
               "fts5 bigram only", len(docs) / base_index_s)
    else:
        print(f"index reused: {len(docs) - changed} of {len(docs)} documents unchanged (incremental), {index_s:.2f} s;"
              " --fresh measures indexing")
    t0 = time.perf_counter()
    core.graph.communities()
    print(f"communities: {(time.perf_counter() - t0) * 1000:.0f} ms (once after indexing, not per query)")

    classifier = RuleBasedClassifier()
    t0 = time.perf_counter()
    core.semantic("warm-up")  # the first query loads the model: a one-off cost, reported apart from the latencies
    print(f"first query embedding (loads the model): {(time.perf_counter() - t0) * 1000:.0f} ms")
    gold = [g for _, g in questions]
    paragraph = {source: i for i, (source, _) in enumerate(docs)}
    keep = {"all": None, "even": [paragraph[g] % 2 == 0 for g in gold], "odd": [paragraph[g] % 2 == 1 for g in gold]}
    source_of = dict(core.index.db.execute(
            "SELECT c.id, d.source FROM chunks c JOIN documents d ON d.id = c.doc_id").fetchall())
    base_source = dict(baseline.index.db.execute(
        "SELECT c.id, d.source FROM chunks c JOIN documents d ON d.id = c.doc_id").fetchall())
    names = ("bigram", "keyword", "semantic", "graph", *FUSION_METHODS, "evidence")
    ranked: dict[str, list[list[str]]] = {n: [] for n in names}
    lat: dict[str, list[float]] = {"bigram": [], "hybrid": [], "semantic": [], "keyword": [], "graph": []}
    types: dict[str, int] = {}
    for n, (question, _) in enumerate(questions, start=1):
        t = time.perf_counter()
        base = baseline.keyword(question, 10)
        lat["bigram"].append((time.perf_counter() - t) * 1000)
        ranked["bigram"].append([base_source[c] for c, _ in base])

        # What SearchCore.search does, timed: classify, the three channels, the default fusion, the hit records,
        # the sentence-evidence re-ordering.
        t = time.perf_counter()
        cls = classifier.classify_now(question)
        rankings, _ = core.channel_rankings(question, cls)
        weights = weights_for(cls, True)
        top = fuse(rankings, weights, DEFAULT_FUSION)[:RERANK_DEPTH]
        top = core.reranked(top, question, core.index.chunks([f.chunk_id for f in top]))
        lat["hybrid"].append((time.perf_counter() - t) * 1000)
        ranked["evidence"].append([source_of[f.chunk_id] for f in top])
        types[cls.type] = types.get(cls.type, 0) + 1
        for channel, ranking in rankings.items():
            ranked[channel].append([source_of[c] for c, _ in ranking])
        for m in FUSION_METHODS:
            ranked[m].append([source_of[f.chunk_id] for f in fuse(rankings, weights, m)[:10]])
        if n % 500 == 0:
            print(f"  {n}/{len(questions)} queries", flush=True)

    for question, _ in questions[:200]:  # each channel alone (the query embeddings are cached by now)
        t = time.perf_counter()
        core.keyword(question)
        lat["keyword"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        core.graph.local_search(question, 50, list(classifier.classify_now(question).extracted_entities))
        lat["graph"].append((time.perf_counter() - t) * 1000)
    core._query_vectors.clear()
    for question, _ in questions[:200]:
        t = time.perf_counter()
        core.semantic(question)
        lat["semantic"].append((time.perf_counter() - t) * 1000)

    print(f"query types (rule classifier): {types}")
    labels = {"bigram": "fts5 bigram (baseline)", "keyword": "keyword channel (bigram+MeCab words)",
              "semantic": "semantic channel (e5-small q4)", "graph": "graph channel (PPR)",
              "rrf": "fusion weighted RRF", "score": "fusion min-max score", "zscore": "fusion z-score",
              "evidence": "fusion z-score + sentence evidence (default)"}
    for split in SPLITS:
        count = len(gold) if keep[split] is None else sum(keep[split] or [])
        print(f"-- {split} questions ({count}){' [tuning split]' if split == 'even' else ''}"
              f"{' [held out]' if split == 'odd' else ''}")
        b1, b10, bm = metrics(ranked["bigram"], gold, keep[split])
        for name in names:
            r1, r10, mrr = metrics(ranked[name], gold, keep[split])
            report(f"[{split}] {labels[name]} R@1", r1, "", "fts5 bigram", b1)
            report(f"[{split}] {labels[name]} R@10", r10, "", "fts5 bigram", b10)
            report(f"[{split}] {labels[name]} MRR@10", mrr, "", "fts5 bigram", bm)
    report("hybrid query latency p50", statistics.median(lat["hybrid"]), "ms", "fts5 bigram p50",
           statistics.median(lat["bigram"]))
    report("hybrid query latency p99", percentile(lat["hybrid"], 0.99), "ms", "fts5 bigram p99",
           percentile(lat["bigram"], 0.99))
    for channel in ("semantic", "keyword", "graph"):
        what = " (query embedding + cosine)" if channel == "semantic" else ""
        report(f"{channel} channel latency p50{what}", statistics.median(lat[channel]), "ms",
               "fts5 bigram p50", statistics.median(lat["bigram"]))
        report(f"{channel} channel latency p99{what}", percentile(lat[channel], 0.99), "ms",
               "fts5 bigram p99", percentile(lat["bigram"], 0.99))
    return 0


if __name__ == "__main__":
    sys.exit(main())
