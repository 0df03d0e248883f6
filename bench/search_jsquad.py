"""JSQuAD retrieval: Recall@1/@10 and MRR@10 per channel and for both fusions, latency, indexing throughput.

Every paragraph of JSQuAD v1.3 validation is one document; every question is a query whose gold document is the
paragraph holding it. Baseline (same run): SQLite FTS5 over character bigrams, the keyword channel alone.
Data: JGLUE JSQuAD (Kurihara, Kawahara and Shibata, "JGLUE: Japanese General Language Understanding Evaluation",
LREC 2022), CC BY-SA 4.0.

Usage: python bench/search_jsquad.py [--data PATH] [--work DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from _report import report

from app.embedding import E5Embedder
from companions.loop_health import percentile
from companions.search.classifier import RuleBasedClassifier
from companions.search.engine import SearchCore, weights_for
from companions.search.fusion import fuse

DATA = Path("/work/shared/data/jsquad-valid-v1.3.json")


def load(path: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    docs, questions = [], []
    for article in data["data"]:
        for i, para in enumerate(article["paragraphs"]):
            source = f"jsquad:{article['title']}#{i}"
            docs.append((source, para["context"].replace(" [SEP] ", "\n\n", 1)))
            questions += [(qa["question"], source) for qa in para["qas"]]
    return docs, questions


def metrics(ranked: list[list[str]], gold: list[str]) -> tuple[float, float, float]:
    r1 = r10 = mrr = 0.0
    for sources, g in zip(ranked, gold, strict=True):
        top = list(dict.fromkeys(sources))[:10]
        if g in top:
            rank = top.index(g) + 1
            r1 += rank == 1
            r10 += 1
            mrr += 1 / rank
    n = len(gold)
    return r1 / n, r10 / n, mrr / n


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, default=Path("/tmp/madoi-bench-jsquad"))
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions (0 = all)")
    args = parser.parse_args()
    docs, questions = load(args.data)
    if args.limit:
        questions = questions[: args.limit]
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"JSQuAD v1.3 validation (JGLUE, Kurihara et al. 2022): {len(docs)} paragraphs, {len(questions)} questions",
          flush=True)

    baseline = SearchCore(args.work / "bigram.sqlite3", None, token_mode="bigram")
    baseline.index.extractor = None
    t0 = time.perf_counter()
    for source, text in docs:
        baseline.index.upsert(source, text)
    base_index_s = time.perf_counter() - t0

    core = SearchCore(args.work / "hybrid.sqlite3", E5Embedder(), token_mode="mixed")
    t0 = time.perf_counter()
    changed = sum(core.index.upsert(source, text) != "unchanged" for source, text in docs)
    index_s = time.perf_counter() - t0
    if changed == len(docs):
        report("index throughput (fts+vectors+graph)", len(docs) / index_s, "docs/s",
               "fts5 bigram only", len(docs) / base_index_s)
    else:
        print(f"index reused: {len(docs) - changed} of {len(docs)} documents unchanged (incremental), {index_s:.2f} s")
    core.graph.communities()

    classifier = RuleBasedClassifier()
    gold = [g for _, g in questions]
    source_of = dict(core.index.db.execute(
            "SELECT c.id, d.source FROM chunks c JOIN documents d ON d.id = c.doc_id").fetchall())
    base_source = dict(baseline.index.db.execute(
        "SELECT c.id, d.source FROM chunks c JOIN documents d ON d.id = c.doc_id").fetchall())
    ranked: dict[str, list[list[str]]] = {n: [] for n in ("bigram", "keyword", "semantic", "graph", "rrf", "score")}
    lat: dict[str, list[float]] = {"bigram": [], "hybrid": [], "semantic": []}
    types: dict[str, int] = {}
    for n, (question, _) in enumerate(questions, start=1):
        t = time.perf_counter()
        base = baseline.keyword(question, 10)
        lat["bigram"].append((time.perf_counter() - t) * 1000)
        ranked["bigram"].append([base_source[c] for c, _ in base])

        t = time.perf_counter()
        cls = classifier.classify_now(question)
        rankings, _ = core.channel_rankings(question, cls)
        weights = weights_for(cls, True)
        fused = {m: fuse(rankings, weights, m) for m in ("rrf", "score")}  # type: ignore[arg-type]
        core.index.chunks([f.chunk_id for f in fused["rrf"][:10]])
        lat["hybrid"].append((time.perf_counter() - t) * 1000)
        types[cls.type] = types.get(cls.type, 0) + 1
        for channel, ranking in rankings.items():
            ranked[channel].append([source_of[c] for c, _ in ranking])
        for m, items in fused.items():
            ranked[m].append([source_of[f.chunk_id] for f in items[:10]])
        if n % 500 == 0:
            print(f"  {n}/{len(questions)} queries", flush=True)

    t = time.perf_counter()
    for question, _ in questions[:200]:
        core.semantic(question)
        lat["semantic"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()

    print(f"query types (rule classifier): {types}")
    b1, b10, bm = metrics(ranked["bigram"], gold)
    for name in ("bigram", "keyword", "semantic", "graph", "rrf", "score"):
        r1, r10, mrr = metrics(ranked[name], gold)
        label = {"bigram": "fts5 bigram (baseline)", "keyword": "keyword channel (bigram+fugashi words)",
                 "semantic": "semantic channel (e5-small q4)", "graph": "graph channel (PPR)",
                 "rrf": "fusion weighted RRF", "score": "fusion normalised score"}[name]
        report(f"{label} R@1", r1, "", "fts5 bigram", b1)
        report(f"{label} R@10", r10, "", "fts5 bigram", b10)
        report(f"{label} MRR@10", mrr, "", "fts5 bigram", bm)
    report("hybrid query latency p50", statistics.median(lat["hybrid"]), "ms", "fts5 bigram p50",
           statistics.median(lat["bigram"]))
    report("hybrid query latency p99", percentile(lat["hybrid"], 0.99), "ms", "fts5 bigram p99",
           percentile(lat["bigram"], 0.99))
    report("semantic channel latency p50 (query embedding + cosine)", statistics.median(lat["semantic"]), "ms",
           "fts5 bigram p50", statistics.median(lat["bigram"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
