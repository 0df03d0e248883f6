"""The semantic channel: the Embedder port and cosine search over the stored chunk vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class EmbedderClosed(RuntimeError):
    """:meth:`Embedder.embed` was called after :meth:`Embedder.close`."""


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors. Adapters live in app/ (e.g. the offline multilingual-e5 model).

    ``query=True`` marks search queries, for models that embed queries and passages differently (e5 prefixes).
    Implementations may block for a long time: the engine calls them from its worker thread only.
    """

    @property
    def name(self) -> str:
        """Identifies the model; when it changes, stored vectors are recomputed."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        """A ``(len(texts), dim)`` float32 array of unit vectors."""
        ...

    def close(self) -> None:
        """Ends the model's work: returns once none of it runs any more (a bounded wait); ``embed`` may then raise
        :class:`EmbedderClosed`. Called once, when the engine closes, from any thread."""
        ...


def to_blob(vector: Vectors) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blobs(blobs: Sequence[bytes], dim: int) -> Vectors:
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)


class VectorMatrix:
    """All chunk vectors in one matrix (rebuilt lazily after writes), searched by one matrix-vector product."""

    def __init__(self, ids: npt.NDArray[np.int64], vectors: Vectors) -> None:
        self.ids = ids
        self.vectors = vectors

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def top(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunk ids most similar to ``query`` with their cosine similarity, best first."""
        n = len(self)
        if n == 0 or k <= 0:
            return []
        scores = self.vectors @ np.asarray(query, dtype=np.float32).reshape(-1)
        k = min(k, n)
        part = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        order = part[np.argsort(-scores[part], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in order]
