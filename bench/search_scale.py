"""Search at scale: 100,000 synthetic chunks (Japanese + English), query latency p50/p99 per channel, index size.

Baseline (same run): the keyword channel alone (SQLite FTS5). Passage vectors come from a deterministic stand-in
(pseudo-random unit vectors per text, 384 dimensions like multilingual-e5-small): embedding 100,000 chunks with the
real model takes hours on this machine, and what is measured here is storing and searching them. Queries are embedded
by the app's real query encoder (multilingual-e5-small, int8 on onnxruntime), so the latencies include it. Graph
extraction is the real heuristic extractor (fugashi for Japanese).

Usage: python bench/search_scale.py [--chunks N] [--work DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _report import report

from app.embedding import E5Embedder
from companions.loop_health import percentile
from companions.search.classifier import RuleBasedClassifier
from companions.search.engine import SearchCore
from companions.search.index import split_chunks
from companions.search.semantic import Vectors

KANJI = "山川田町駅港島橋寺城森湖谷村海空風雪花鳥石金銀東西南北新古大小高中本"
KATA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモラリルレロ"
EN = ["Alder", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Grove", "Harbor", "Iris", "Juniper", "Kestrel", "Lumen"]


class StandInEmbedder:
    """Passages: a pseudo-random unit vector per text. Queries: the real e5 query encoder (its cost is measured)."""

    name = "stand-in-384"
    dim = 384

    def __init__(self) -> None:
        self._queries = E5Embedder()

    def close(self) -> None:
        self._queries.close()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        if query:
            return self._queries.embed(texts, query=True)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rng = np.random.default_rng(zlib.crc32(text.encode()))
            v = rng.standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def vocabulary(rng: random.Random, n: int) -> list[str]:
    words = set()
    while len(words) < n:
        kind = rng.random()
        if kind < 0.5:
            words.add("".join(rng.choice(KANJI) for _ in range(rng.randint(2, 3))))
        elif kind < 0.8:
            words.add("".join(rng.choice(KATA) for _ in range(rng.randint(3, 5))))
        else:
            words.add(rng.choice(EN) + " " + rng.choice(EN) + str(rng.randint(1, 99)))
    return sorted(words)


def sentence(rng: random.Random, vocab: list[str]) -> str:
    a, b, c = rng.sample(vocab, 3)
    if a[0].isascii():
        return f"{a} met {b} near {c}."
    return f"{a}は{b}の近くにある{c}と関係がある。"


def paragraph(rng: random.Random, vocab: list[str], chars: int = 450) -> str:
    out = ""
    while len(out) < chars:
        out += sentence(rng, vocab) + " "
    return out.strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--per-doc", type=int, default=1, help="paragraphs per document")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--chars", type=int, default=200, help="characters per chunk (one paragraph each)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/madoi-bench-scale"))
    parser.add_argument("--reuse", action="store_true", help="query an index left by a previous run (no indexing)")
    args = parser.parse_args()
    rng = random.Random(7)
    vocab = vocabulary(rng, 20_000)
    args.work.mkdir(parents=True, exist_ok=True)
    db = args.work / f"scale-{args.chunks}.sqlite3"
    reuse = args.reuse and db.exists()
    if not reuse:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    core = SearchCore(db, StandInEmbedder())
    t0 = time.perf_counter()
    d = chunks = 0
    while chunks < args.chunks and not reuse:
        text = "\n\n".join(paragraph(rng, vocab, args.chars) for _ in range(args.per_doc))
        core.index.upsert(f"synthetic://{d}", text)
        chunks += len(split_chunks(text))  # short paragraphs of one document are packed into one chunk
        d += 1
        if d % 5000 == 0:
            print(f"  {chunks} chunks indexed, {time.perf_counter() - t0:.0f} s", flush=True)
    index_s = time.perf_counter() - t0
    core.index.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stats = core.index.stats()
    t0 = time.perf_counter()
    communities = core.graph.rebuild_communities()
    community_s = time.perf_counter() - t0
    size_mb = db.stat().st_size / 1e6
    print(f"index: {stats}, {communities} communities summarised in {community_s:.1f} s")

    classifier = RuleBasedClassifier()
    queries = []
    for _ in range(args.queries):
        a, b = rng.sample(vocab, 2)
        queries.append(rng.choice([f"{a}について教えて", f"{a}と{b}の関係は？", f"What is {a}?"]))
    lat: dict[str, list[float]] = {"keyword": [], "semantic": [], "graph": [], "hybrid": []}
    core.semantic("warm-up")  # builds the query encoder: a one-off cost at the first search, not a query's
    for q in queries:
        cls = classifier.classify_now(q)
        t = time.perf_counter()  # first, while nothing of this query is cached (its embedding, its FTS terms)
        core.search(q, cls)
        lat["hybrid"].append((time.perf_counter() - t) * 1000)
        core._query_vectors.clear()
        for name, fn in (("keyword", core.keyword), ("semantic", core.semantic),
                         ("graph", lambda text: core.graph.local_search(text, 50))):
            t = time.perf_counter()
            fn(q)
            lat[name].append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    core.search("全体のテーマは？", classifier.classify_now("全体のテーマは？"))
    global_ms = (time.perf_counter() - t) * 1000

    base50 = statistics.median(lat["keyword"])
    base99 = percentile(lat["keyword"], 0.99)
    print(f"{stats['chunks']} synthetic chunks, {len(queries)} queries (ja local, ja relationship, en local)")
    if not reuse:
        report("indexing throughput", stats["chunks"] / index_s, "chunks/s")
    report("index size", size_mb, "MB")
    report("index size per chunk", size_mb * 1e6 / stats["chunks"], "bytes")
    for name in ("keyword", "semantic", "graph", "hybrid"):
        report(f"{name} query p50", statistics.median(lat[name]), "ms", "keyword p50", base50)
        report(f"{name} query p99", percentile(lat[name], 0.99), "ms", "keyword p99", base99)
    report("global query (community ranking)", global_ms, "ms", "keyword p50", base50)
    core.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
