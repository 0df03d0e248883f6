"""Test doubles behind the search ports (Embedder)."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Sequence

import numpy as np

from companions.search.semantic import Vectors
from companions.search.tokenize import terms


class HashingEmbedder:
    """A deterministic Embedder: hashed bag of index terms, L2-normalised. Records every batch and its thread."""

    def __init__(self, dim: int = 128, name: str = "hashing-128") -> None:
        self._dim = dim
        self._name = name
        self.calls: list[tuple[tuple[str, ...], bool]] = []
        self.threads: set[str] = set()
        self.query_threads: set[str] = set()
        self.queried = threading.Event()  # set by the first query embedding

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        self.calls.append((tuple(texts), query))
        self.threads.add(threading.current_thread().name)
        if query:
            self.query_threads.add(threading.current_thread().name)
            self.queried.set()
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in terms(text, "bigram"):
                out[row, zlib.crc32(term.encode()) % self._dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out

    def close(self) -> None:
        pass

    def embedded_texts(self) -> list[str]:
        return [t for batch, is_query in self.calls if not is_query for t in batch]
