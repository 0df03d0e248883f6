"""The int8 encoder's graph serialized ahead (what the PyInstaller bundle ships): it loads without the onnx package and
without calibrating, and gives the vectors of the encoder built at load time; it serves only its own model file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from app.search.embedding import model_file
from app.search.query_encoder import OnnxE5, encoder, prebuilt

MODEL_FILE = model_file()


@pytest.fixture(scope="module")
def ahead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert MODEL_FILE is not None
    folder = tmp_path_factory.mktemp("ahead")
    assert [p.name for p in encoder.write_prebuilt(MODEL_FILE, folder)] == [prebuilt.GRAPH, prebuilt.SPEC]
    return folder


def test_the_graph_built_ahead_needs_no_onnx_and_gives_the_same_vectors(
        ahead: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert MODEL_FILE is not None
    built_now = OnnxE5(MODEL_FILE)
    monkeypatch.setattr(encoder, "load", lambda path: prebuilt.load(path, ahead))
    monkeypatch.setitem(sys.modules, "onnx", None)  # as in the bundle, which leaves it out
    monkeypatch.setattr(OnnxE5, "_calibrate", lambda self: pytest.fail("calibrated again"))
    loaded = OnnxE5(MODEL_FILE)
    assert loaded.outliers == built_now.outliers
    for text in ("日本で一番高い山はどこですか？", "What is the capital of France?"):
        assert np.array_equal(loaded.embed(text), built_now.embed(text))


def test_a_graph_built_from_another_model_file_is_not_used(ahead: Path, tmp_path: Path) -> None:
    assert MODEL_FILE is not None
    other = tmp_path / "other"
    other.mkdir()
    (other / prebuilt.GRAPH).write_bytes((ahead / prebuilt.GRAPH).read_bytes())
    spec = json.loads((ahead / prebuilt.SPEC).read_text(encoding="utf-8"))
    (other / prebuilt.SPEC).write_text(json.dumps({**spec, "model_sha256": "0" * 64}), encoding="utf-8")
    assert prebuilt.load(MODEL_FILE, other) is None
    assert prebuilt.load(MODEL_FILE, tmp_path / "none") is None  # a source checkout: built at load time
    found = prebuilt.load(MODEL_FILE, ahead)
    assert found is not None
    assert found.outliers == spec["outliers"]
