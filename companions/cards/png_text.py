"""PNG text chunks (``tEXt``, ``zTXt``, ``iTXt``), read and written with ``struct`` and ``zlib`` only.

Character cards travel inside PNG pictures as a text chunk (``chara``: a SillyTavern V2 card, ``ccv3``: a V3
card, each base64 JSON). Reading walks the chunks without decoding the picture; every length, CRC and size is
checked, so a broken or hostile file is a :class:`PngError` with a reason, never a crash or a huge allocation.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Final

SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
TEXT_CHUNKS: Final = (b"tEXt", b"zTXt", b"iTXt")
MAX_TEXT_BYTES: Final = 16 * 1024 * 1024  # a decompressed text chunk (a card with a long lorebook is ~1 MB)


class PngError(ValueError):
    """The file is not a PNG, or one of its chunks is broken (the message says which and how)."""


def chunks(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Each ``(type, body)`` of the PNG ``data``, in order, up to ``IEND``."""
    if not data.startswith(SIGNATURE):
        raise PngError("not a PNG picture (its first bytes are not PNG's signature)")
    at = len(SIGNATURE)
    while at < len(data):
        if at + 8 > len(data):
            raise PngError("the picture ends in the middle of a chunk header")
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        end = at + 8 + length + 4
        if end > len(data):
            raise PngError(f"the {kind.decode('latin-1')!r} chunk is cut off")
        body = data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:end])
        if zlib.crc32(kind + body) != crc:
            raise PngError(f"the {kind.decode('latin-1')!r} chunk is damaged (its checksum does not match)")
        yield kind, body
        if kind == b"IEND":
            return
        at = end
    raise PngError("the picture has no end (IEND chunk)")


def _inflate(body: bytes) -> bytes:
    inflater = zlib.decompressobj()
    out = inflater.decompress(body, MAX_TEXT_BYTES + 1)
    if len(out) > MAX_TEXT_BYTES or inflater.unconsumed_tail:
        raise PngError(f"a compressed text chunk unpacks to more than {MAX_TEXT_BYTES // 1_048_576} MB")
    return out


def text_of(kind: bytes, body: bytes) -> tuple[str, str]:
    """``(keyword, text)`` of one text chunk."""
    keyword, sep, rest = body.partition(b"\0")
    if not sep or not 1 <= len(keyword) <= 79:
        raise PngError(f"a {kind.decode()} chunk has no valid keyword")
    name = keyword.decode("latin-1")
    try:
        if kind == b"tEXt":
            return name, rest.decode("latin-1")
        if kind == b"zTXt":
            if not rest or rest[0] != 0:
                raise PngError(f"the {name!r} chunk uses an unknown compression")
            return name, _inflate(rest[1:]).decode("latin-1")
        if len(rest) < 2:
            raise PngError(f"the {name!r} chunk is too short")
        compressed, method, rest = rest[0], rest[1], rest[2:]
        _language, _, rest = rest.partition(b"\0")
        _translated, _, text = rest.partition(b"\0")
        if compressed and method != 0:
            raise PngError(f"the {name!r} chunk uses an unknown compression")
        return name, (_inflate(text) if compressed else text).decode("utf-8")
    except (zlib.error, UnicodeDecodeError) as err:
        raise PngError(f"the {name!r} chunk cannot be read ({err})") from None


def read_texts(data: bytes) -> dict[str, str]:
    """Every text chunk of the PNG ``data`` by keyword (the last one wins, as in SillyTavern)."""
    return dict(text_of(kind, body) for kind, body in chunks(data) if kind in TEXT_CHUNKS)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def without_texts(data: bytes) -> bytes:
    """The PNG ``data`` without its text chunks (the picture alone)."""
    return SIGNATURE + b"".join(_chunk(k, b) for k, b in chunks(data) if k not in TEXT_CHUNKS)


def with_texts(data: bytes, texts: dict[str, str]) -> bytes:
    """The PNG ``data`` with ``texts`` as ``tEXt`` chunks (ASCII) before its image data, replacing any text
    chunks of the same keywords."""
    out = [SIGNATURE]
    added = False
    for kind, body in chunks(data):
        if kind in TEXT_CHUNKS and text_of(kind, body)[0] in texts:
            continue
        if kind == b"IDAT" and not added:
            out += [_chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("ascii")) for k, v in texts.items()]
            added = True
        out.append(_chunk(kind, body))
    return b"".join(out)


def solid_png(colour: str, size: int = 256) -> bytes:
    """A ``size`` x ``size`` picture of one colour (``#rrggbb``): a card exported without an avatar."""
    rgb = bytes.fromhex(colour.removeprefix("#"))
    row = b"\0" + rgb * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(row * size, 9)) + _chunk(b"IEND", b"")
