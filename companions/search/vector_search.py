"""The semantic channel's search over the stored vectors: an exact scan for small collections, an approximate
index (faiss's inverted file, companions/search/ann.py) for large ones.

Below ``ann_min`` vectors every query multiplies the whole float32 matrix (exact, and a few milliseconds); from
``ann_min`` on, the approximate index is built once and then kept in step with every write (the index thread
applies the vector log after each document, so the first query after a long indexing run does not pay for it). A
collection that shrinks below ``ann_min * 0.8`` goes back to the exact scan and its index file is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from companions.search.ann import AnnIndex, ann_path, forget_log, last_seq
from companions.search.index import SearchIndex
from companions.search.semantic import VectorMatrix, Vectors

# Where the approximate index starts to pay: 50,000 vectors is a 77 MB scan (~5-8 ms on one core, more under load)
# against ~2-4 ms for the inverted file with its rescoring (bench/search_scale.py); below it, recall stays exactly 1.
ANN_MIN_VECTORS = 50_000
SHRINK_FACTOR = 0.8


@dataclass(frozen=True)
class Nearest:
    """What :meth:`VectorSearch.nearest` found: the final hits (exact scan) or the candidates to rescore."""

    hits: list[tuple[int, float]] | None = None
    candidates: list[int] = field(default_factory=list)


class VectorSearch:
    """Exact or approximate nearest chunks for a query vector, following the index's writes."""

    def __init__(self, index: SearchIndex, *, ann_min: int = ANN_MIN_VECTORS) -> None:
        self.index = index
        self.ann_min = ann_min
        self.path: Path = ann_path(index.path)
        self._matrix: VectorMatrix | None = None
        self._matrix_generation = -1
        self._matrix_size = 0  # vectors in the last matrix read (or stored when the index opened)
        self._ann: AnnIndex | None = None
        if index.embedder is not None:
            stored = int(index.db.execute("SELECT count(*) FROM chunks").fetchone()[0])  # an index, not the rows
            self._matrix_size = stored
            if stored >= ann_min:
                self._ann = AnnIndex.open(index.db, self.path, index.embedder.dim)
            else:
                AnnIndex.remove_file(index.db, self.path)
            index.write_listeners.append(self.after_write)

    @property
    def approximate(self) -> bool:
        return self._ann is not None

    def __len__(self) -> int:
        return len(self._ann) if self._ann is not None else len(self._exact())

    def after_write(self) -> None:
        """Called by the index after each write: the approximate index takes the logged changes at once; an exact
        collection that has grown to ``ann_min`` gets its approximate index now."""
        if self._ann is not None:
            self._ann.catch_up()
            if len(self._ann) < self.ann_min * SHRINK_FACTOR:
                self._to_exact()
            return
        logged = int(self.index.db.execute(  # the log's entries are contiguous: two look-ups, not a count
            "SELECT coalesce(max(seq) - min(seq) + 1, 0) FROM vector_log").fetchone()[0])
        if self._matrix_size + logged >= self.ann_min:  # an estimate: deletions count as growth here
            self._matrix = None
            ann = AnnIndex.open(self.index.db, self.path, self._dim)
            if len(ann) >= self.ann_min:
                self._ann = ann
            else:
                self._matrix_size = len(ann)
                AnnIndex.remove_file(self.index.db, self.path)

    def refresh(self) -> None:
        """Reads the exact matrix again if a write changed it (the engine calls this while the query is embedded)."""
        if self._ann is None:
            self._exact()

    def top(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks most similar to ``query`` with their cosine similarity, best first."""
        self.refresh()
        return self.rescored(query, self.nearest(query, k), k)

    def nearest(self, query: Vectors, k: int) -> Nearest:
        """The half of :meth:`top` that reads no SQLite and runs without the GIL (faiss, or numpy's product over
        the matrix read by :meth:`refresh`), so any thread may run it while no write runs."""
        if self._ann is not None:
            return Nearest(candidates=self._ann.candidates(query, k))
        if self._matrix is None:  # not read yet (refresh was not called): rescored reads it in the index's thread
            return Nearest()
        return Nearest(hits=self._matrix.top(query, k))

    def rescored(self, query: Vectors, nearest: Nearest, k: int) -> list[tuple[int, float]]:
        """The other half, in the index's thread: the candidates scored with their exact vectors from SQLite."""
        if nearest.hits is not None:
            return nearest.hits[:k]
        if self._ann is None:  # the matrix was not read, or a write switched to the exact scan since
            return self._exact().top(query, k)
        return self._ann.rescored(query, nearest.candidates, k)

    def close(self) -> None:
        """Writes the approximate index's unsaved changes (the log would replay them at the next open otherwise)."""
        if self._ann is not None:
            self._ann.save()

    @property
    def _dim(self) -> int:
        return self.index.embedder.dim if self.index.embedder is not None else 0

    def _exact(self) -> VectorMatrix:
        if self._matrix is None or self._matrix_generation != self.index.generation:
            seq = last_seq(self.index.db)
            self._matrix = self.index.vector_matrix()
            self._matrix_generation = self.index.generation
            self._matrix_size = len(self._matrix)
            forget_log(self.index.db, seq)  # the matrix holds every vector logged so far
        return self._matrix

    def _to_exact(self) -> None:
        self._ann = None
        AnnIndex.remove_file(self.index.db, self.path)
        self._matrix = None
