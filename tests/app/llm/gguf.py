"""Small files that start like GGUF models (the magic and version 3), for the tests that find and fetch models."""

from __future__ import annotations

import struct
from pathlib import Path


def gguf_bytes(size: int = 64, *, seed: int = 0) -> bytes:
    """``size`` bytes starting with a GGUF header (magic, version 3), the rest a pattern that depends on ``seed``."""
    head = b"GGUF" + struct.pack("<I", 3)
    pattern = bytes((i * 31 + seed) % 251 for i in range(251))
    body = (pattern * (size // 251 + 1))[: max(0, size - len(head))]
    return head + body


def write_gguf(path: Path, size: int = 64, *, seed: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gguf_bytes(size, seed=seed))
    return path
