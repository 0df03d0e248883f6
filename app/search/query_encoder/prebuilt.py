"""The int8 encoder's graph serialized ahead, with its calibrated outlier channels: what the PyInstaller bundle ships
(packaging/madoi.spec writes it at build time: encoder.write_prebuilt) so that neither the ``onnx`` package (9 MB
with ml_dtypes) nor the calibration runs when the encoder loads. The weights are still computed from the model file
at load time and handed to onnxruntime beside the graph; the graph serves only the model file it was built from (its
SHA-256)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

GRAPH: Final = "e5-int8.onnx"
SPEC: Final = "e5-int8.json"
HERE: Final = Path(__file__).parent  # in the bundle, the files are put beside this module


@dataclass(frozen=True, slots=True)
class Prebuilt:
    model: bytes  # the ONNX graph, its large weights left out
    outliers: dict[str, list[int]]


def digest(model_file: Path) -> str:
    with model_file.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def load(model_file: Path, folder: Path = HERE) -> Prebuilt | None:
    """The graph serialized ahead for ``model_file``, or None when there is none (a source checkout) or it was built
    from another model file."""
    spec = folder / SPEC
    if not spec.is_file():
        return None
    data = json.loads(spec.read_text(encoding="utf-8"))
    if data.get("model_sha256") != digest(model_file):
        return None
    outliers = {str(key): [int(c) for c in channels] for key, channels in data["outliers"].items()}
    return Prebuilt((folder / GRAPH).read_bytes(), outliers)
