"""The semantic channel's approximate nearest-neighbour index for large collections: faiss's inverted file.

An exact scan reads every stored vector per query (100,000 chunks: 150 MB of float32, 10-40 ms on this machine's
cores, more under load). The inverted file (``IndexIVFScalarQuantizer``) clusters the vectors around ``nlist``
centroids (k-means on a sample) and a query reads only the ``nprobe`` clusters nearest to it; the vectors are
stored as 8-bit codes (384 bytes each instead of 1,536), and the candidates found are scored again with their
exact float32 vectors from SQLite, so the channel's scores (and the fusion's calibration) stay exact cosines and
the 8-bit rounding costs no recall. An inverted file takes removals and additions as they come (an HNSW graph
does not remove in faiss); it is re-clustered when the collection has grown ``REBUILD_GROWTH`` times past the size
it was clustered at. (usearch's HNSW was measured first: as fast, but importing it before onnxruntime makes
onnxruntime's import crash the process, libstdc++ 'codecvt' in its static initialisers.)

SQLite stays the truth, and the file beside it (``<index>.ann``) is derived from it:

* triggers log every change of a chunk's vector (insert, update, delete) into ``vector_log`` in the write's own
  transaction, so no change is ever missed, whatever the process does after the commit;
* the file is written whole (to a temporary file, then renamed), after which ``meta.ann_seq`` records the last log
  entry it holds and the entries up to it are deleted;
* opening loads the file and replays the log entries after ``ann_seq`` (re-reading each chunk's vector: replaying
  twice is harmless); a missing, unreadable or mismatched file is rebuilt from the stored vectors.

A crash during indexing therefore loses nothing: the next open catches the index up from the log (bounded by the
save interval, ``SAVE_EVERY``), and indexing resumes with the documents whose content hash is not stored yet.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from companions.common.private_files import PRIVATE_FILE, make_private
from companions.search.semantic import Vectors, from_blobs

log = logging.getLogger(__name__)

LOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS chunks_vector_insert AFTER INSERT ON chunks WHEN new.embedding IS NOT NULL BEGIN
    INSERT INTO vector_log(chunk_id) VALUES (new.id);
END;
CREATE TRIGGER IF NOT EXISTS chunks_vector_update AFTER UPDATE OF embedding ON chunks BEGIN
    INSERT INTO vector_log(chunk_id) VALUES (new.id);
END;
CREATE TRIGGER IF NOT EXISTS chunks_vector_delete AFTER DELETE ON chunks WHEN old.embedding IS NOT NULL BEGIN
    INSERT INTO vector_log(chunk_id) VALUES (old.id);
END;
"""
# Measured by bench/search_scale.py and sweeps beside it (e5-like stand-in vectors, 300 real JSQuAD query vectors,
# recall@10 against the exact scan once CANDIDATES are rescored exactly). e5's vectors crowd (a query's nearest ten
# are near-ties among many), so recall follows the share of the vectors read, and finer clusters read fewer for the
# same recall. 1,000,000 vectors, one run, interleaved: 1,024 clusters with 384 read 27.8 ms, recall 0.992; 4,096
# clusters with 1,024 read 23.3 ms, 0.993, with 768 read 19.6 ms, 0.989 (0.986 with another k-means run). 100,000
# vectors in 1,024 clusters: 384 read 0.999, 256 0.992 (1.7 ms), 192 0.986. A quarter is read, for the margin, and
# at least MIN_PROBES. More candidates never helped (100 and 200 gave the same), the L2 metric did not cluster
# better (2,048 clusters, 512 read: 0.982), and 4-bit PQ fast-scan reads 768 of 4,096 clusters in 3 ms but ranks
# too coarsely: 0.89 after 1,000 candidates.
MIN_PROBES = 384  # at least: a small collection's clusters are cheap to read (100,000 vectors: 0.999 in ~3 ms)
PROBE_SHARE = 1 / 4  # the share of the clusters read
CANDIDATES = 100  # at least; k * CANDIDATE_FACTOR when more results are wanted
CANDIDATE_FACTOR = 2
MIN_LISTS, MAX_LISTS = 8, 4096
TRAIN_PER_LIST = 40  # k-means sample: this many vectors per cluster (faiss warns below 39)
REBUILD_GROWTH = 4.0  # re-clustered when the collection has grown this many times past its clustering
BUILD_BATCH = 20_000  # vectors read from SQLite and added at a time
SAVE_EVERY = 20_000  # log entries applied in memory before the file is written again
THREADS = min(2, os.cpu_count() or 1)
# What a saved index was built as (the metric, the codes, the rule for the lists): a file built by another version's
# layout is built again at the next open, since nprobe alone cannot make up for different clusters.
LAYOUT = "IVF-SQ8 inner product, 4 sqrt(n) lists"
LISTS_PER_ROOT = 4


def list_count(n: int) -> int:
    """Clusters for ``n`` vectors: the power of two nearest to 4 sqrt(n), within [MIN_LISTS, MAX_LISTS], and with
    TRAIN_PER_LIST vectors to train each."""
    target = min(LISTS_PER_ROOT * max(n, 1) ** 0.5, n / TRAIN_PER_LIST)
    return int(min(MAX_LISTS, max(MIN_LISTS, 2 ** round(np.log2(max(target, 1.0))))))


def ann_path(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + ".ann")


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def last_seq(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT coalesce(max(seq), 0) FROM vector_log").fetchone()[0])


def forget_log(db: sqlite3.Connection, upto: int) -> None:
    """Deletes the log entries up to ``upto`` (applied to what now holds the vectors)."""
    db.execute("DELETE FROM vector_log WHERE seq <= ?", (upto,))


def _stored_vectors(db: sqlite3.Connection, dim: int, batch: int) -> Iterator[tuple[npt.NDArray[np.uint64], Vectors]]:
    cursor = db.execute("SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id")
    while rows := cursor.fetchmany(batch):
        yield np.array([r[0] for r in rows], dtype=np.uint64), from_blobs([r[1] for r in rows], dim)


def exact_vectors(db: sqlite3.Connection, ids: Sequence[int], dim: int) -> tuple[list[int], Vectors]:
    """The stored float32 vectors of ``ids`` (those that have one), by primary key."""
    found: list[int] = []
    blobs: list[bytes] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        for cid, blob in db.execute(
                f"SELECT id, embedding FROM chunks WHERE id IN ({','.join('?' * len(part))}) "
                "AND embedding IS NOT NULL", list(part)):
            found.append(int(cid))
            blobs.append(blob)
    return found, from_blobs(blobs, dim)


class AnnIndex:
    """The inverted file of every stored chunk vector (ids are chunk ids), kept in step with SQLite's vector log."""

    def __init__(self, db: sqlite3.Connection, path: Path, dim: int) -> None:
        self.db = db
        self.path = path
        self.dim = dim
        self.applied = 0  # the last vector_log entry the index holds
        self.saved = 0  # the last one the file holds
        self.clustered_at = 0  # how many vectors the clusters were trained on the collection at
        self._index: Any = None

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)

    @classmethod
    def open(cls, db: sqlite3.Connection, path: Path, dim: int) -> AnnIndex:
        """The saved index caught up with the log, or a new one built from the stored vectors."""
        faiss = _faiss()
        ann = cls(db, path, dim)
        saved_seq, saved_size, clustered = (_meta(db, k) for k in ("ann_seq", "ann_size", "ann_clustered_at"))
        if saved_seq is not None and saved_size is not None and clustered is not None and path.exists():
            try:
                index = faiss.read_index(str(path))
            except (RuntimeError, ValueError, OSError) as exc:
                log.warning("the vector index %s is unreadable (%s); rebuilding it", path, exc)
            else:
                if _meta(db, "ann_layout") != LAYOUT:
                    log.info("the vector index %s was laid out by another version; rebuilding it", path)
                elif int(index.ntotal) == int(saved_size) and int(index.d) == dim:
                    index.nprobe = probes(int(index.nlist))  # this version's setting, not the file's
                    ann._index = index
                    ann.applied = ann.saved = int(saved_seq)
                    ann.clustered_at = int(clustered)
                    ann.catch_up()
                    return ann
                else:
                    log.warning("the vector index %s does not match the database; rebuilding it", path)
        ann.rebuild()
        return ann

    def rebuild(self) -> None:
        """Clusters a sample of the stored vectors, adds every one of them and saves the index."""
        faiss = _faiss()
        self.applied = last_seq(self.db)  # everything logged so far is in the table read below
        total = int(self.db.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[0])
        if total == 0:  # nothing to cluster: an empty index (the owner goes back to the exact scan)
            self._index = None
            return
        lists = list_count(total)
        sample = _sample(self.db, self.dim, lists * TRAIN_PER_LIST, total)
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFScalarQuantizer(quantizer, self.dim, min(lists, max(1, len(sample))),
                                              faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        index.cp.niter = 10
        faiss.omp_set_num_threads(THREADS)
        index.train(sample)
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # removal by id without scanning every list
        for keys, vectors in _stored_vectors(self.db, self.dim, BUILD_BATCH):
            index.add_with_ids(vectors, keys.astype(np.int64))
        index.nprobe = probes(int(index.nlist))
        faiss.omp_set_num_threads(1)  # a few vectors at a time from now on: waking a second thread costs more
        self._index = index
        self.clustered_at = int(index.ntotal)
        self.saved = -1
        self.save()

    def catch_up(self) -> int:
        """Applies the vector changes logged since the index's last one: a removed or changed chunk leaves the
        index, and whatever vector it has now goes in. Returns how many chunks changed."""
        rows = self.db.execute("SELECT seq, chunk_id FROM vector_log WHERE seq > ? ORDER BY seq",
                               (self.applied,)).fetchall()
        if not rows:
            return 0
        changed = list(dict.fromkeys(int(cid) for _, cid in rows))
        # Most chunks re-embedded (or none indexed yet): cheaper, and better clustered, from scratch.
        if self._index is None or len(changed) > len(self) // 2:
            self.rebuild()
            return len(changed)
        keys = np.array(changed, dtype=np.int64)
        self._index.remove_ids(keys)
        found, vectors = exact_vectors(self.db, changed, self.dim)
        if found:
            self._index.add_with_ids(vectors, np.array(found, dtype=np.int64))
        self.applied = int(rows[-1][0])
        if len(self) > REBUILD_GROWTH * max(self.clustered_at, 1):
            self.rebuild()
        elif self.applied - self.saved >= SAVE_EVERY:
            self.save()
        return len(changed)

    def save(self) -> None:
        """Writes the index (whole, then renamed over the old file) and forgets the log entries it holds."""
        if self._index is None or (self.saved == self.applied and self.path.exists()):
            return
        temporary = self.path.with_name(self.path.name + ".tmp")
        _faiss().write_index(self._index, str(temporary))
        make_private(temporary, PRIVATE_FILE)  # vectors of the user's conversations and files: as private as they are
        os.replace(temporary, self.path)
        self.db.execute("BEGIN")
        try:
            self.db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                [("ann_seq", str(self.applied)), ("ann_size", str(len(self))),
                                 ("ann_clustered_at", str(self.clustered_at)), ("ann_layout", LAYOUT)])
            forget_log(self.db, self.applied)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.saved = self.applied

    def top(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest to ``query`` with their exact cosine similarity, best first."""
        return self.rescored(query, self.candidates(query, k), k)

    def candidates(self, query: Vectors, k: int) -> list[int]:
        """The chunk ids the inverted file finds nearest to ``query`` (more than ``k``, by their 8-bit codes).

        Touches no SQLite, and faiss releases the GIL while it searches: the engine runs this on its embedding
        thread while the index thread queries the keyword channel. It must not overlap a write (``catch_up``).
        """
        if k <= 0 or not len(self):
            return []
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        _, keys = self._index.search(q, max(k * CANDIDATE_FACTOR, CANDIDATES))
        return [int(key) for key in keys[0] if key >= 0]

    def rescored(self, query: Vectors, candidates: Sequence[int], k: int) -> list[tuple[int, float]]:
        """The ``k`` best of ``candidates`` by their exact float32 vectors (read from SQLite), best first."""
        ids, vectors = exact_vectors(self.db, candidates, self.dim)
        if not ids or k <= 0:
            return []
        scores = vectors @ np.asarray(query, dtype=np.float32).reshape(-1)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(ids[i], float(scores[i])) for i in order]

    @property
    def code_bytes(self) -> int:
        """Bytes of the stored codes and ids (the index's bulk in memory)."""
        return len(self) * (int(self._index.code_size) + 8) if self._index is not None else 0

    @staticmethod
    def remove_file(db: sqlite3.Connection, path: Path) -> None:
        """Forgets a saved index (the collection shrank below the size that needs one)."""
        path.unlink(missing_ok=True)
        db.execute("DELETE FROM meta WHERE key IN ('ann_seq', 'ann_size', 'ann_clustered_at', 'ann_layout')")


def probes(lists: int) -> int:
    return min(lists, max(MIN_PROBES, int(lists * PROBE_SHARE)))


def _faiss() -> Any:
    import faiss  # ~0.1 s and 20 MB of native code: only for a large collection

    return faiss


def _sample(db: sqlite3.Connection, dim: int, wanted: int, total: int) -> Vectors:
    """About ``wanted`` stored vectors spread over the table (every n-th row by id), for the clustering."""
    step = max(1, total // max(wanted, 1))
    rows = db.execute("SELECT embedding FROM chunks WHERE embedding IS NOT NULL AND id % ? = 0 LIMIT ?",
                      (step, wanted)).fetchall()
    if len(rows) < wanted // 2:  # ids are not spread evenly (a small or oddly numbered table): take the first ones
        rows = db.execute("SELECT embedding FROM chunks WHERE embedding IS NOT NULL LIMIT ?", (wanted,)).fetchall()
    return from_blobs([r[0] for r in rows], dim)
