"""PNG text chunks (``tEXt``, ``zTXt``, ``iTXt``), read and written with ``struct`` and ``zlib`` only.

Character cards travel inside PNG pictures as a text chunk (``chara``: a SillyTavern V2 card, ``ccv3``: a V3
card, each base64 JSON). Reading walks the chunks without decoding the picture; every length, CRC and size is
checked, so a broken or hostile file is a :class:`PngError` with a reason, never a crash or a huge allocation.

Only the chunks asked for (:data:`CARD_KEYWORDS`) are unpacked; the keyword is read before anything is inflated.
Each is bounded once inflated (:data:`MAX_TEXT_BYTES`), all of them together too (:data:`MAX_TOTAL_TEXT_BYTES`),
and a walk over the chunks stops after :data:`MAX_WALK_SECONDS`. Unpacking every text chunk made a 6.5 MB picture
of many small zTXt bombs take 5.6 GB and die with MemoryError.
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Collection, Iterator
from typing import Final

SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
TEXT_CHUNKS: Final = (b"tEXt", b"zTXt", b"iTXt")
CARD_KEYWORDS: Final = ("chara", "ccv3")
MAX_TEXT_BYTES: Final = 16 * 1024 * 1024  # one text once inflated (a card's 8 MB of JSON is 11 MB of base64)
MAX_TOTAL_TEXT_BYTES: Final = 32 * 1024 * 1024  # the texts read from one picture, all together
MAX_WALK_SECONDS: Final = 10.0  # a 64 MB picture's chunks are checked in ~0.1 s; millions of tiny chunks take longer


class PngError(ValueError):
    """The file is not a PNG, or one of its chunks is broken (the message says which and how)."""


class TextTooLong(PngError):
    """A text chunk that unpacks beyond its bound (it was not unpacked further)."""


def chunks(data: bytes, *, seconds: float = MAX_WALK_SECONDS) -> Iterator[tuple[bytes, bytes]]:
    """Each ``(type, body)`` of the PNG ``data``, in order, up to ``IEND``; a walk longer than ``seconds`` stops
    with a :class:`PngError`."""
    if not data.startswith(SIGNATURE):
        raise PngError("not a PNG picture (its first bytes are not PNG's signature)")
    deadline = time.monotonic() + seconds
    at = len(SIGNATURE)
    while at < len(data):
        if time.monotonic() > deadline:
            raise PngError(f"the picture takes more than {seconds:g} s to read (too many chunks)")
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


def _inflate(body: bytes, limit: int) -> bytes:
    """``body`` inflated, or a :class:`PngError` as soon as it would be longer than ``limit`` bytes (the bytes
    past it are never produced)."""
    inflater = zlib.decompressobj()
    out = inflater.decompress(body, limit + 1)
    if len(out) > limit or inflater.unconsumed_tail:
        raise TextTooLong(f"a compressed text chunk unpacks to more than {limit / 1_048_576:g} MB")
    return out


def keyword_of(kind: bytes, body: bytes) -> str:
    """The keyword of one text chunk (read without unpacking its text)."""
    keyword, sep, _ = body[:80].partition(b"\0")
    if not sep or not 1 <= len(keyword) <= 79:
        raise PngError(f"a {kind.decode()} chunk has no valid keyword")
    return keyword.decode("latin-1")


def text_of(kind: bytes, body: bytes, *, limit: int = MAX_TEXT_BYTES) -> tuple[str, str]:
    """``(keyword, text)`` of one text chunk; a text longer than ``limit`` bytes is a :class:`PngError`."""
    name = keyword_of(kind, body)
    rest = body[len(name) + 1:]
    try:
        if kind == b"tEXt":
            text = rest
        elif kind == b"zTXt":
            if not rest or rest[0] != 0:
                raise PngError(f"the {name!r} chunk uses an unknown compression")
            text = _inflate(rest[1:], limit)
        else:
            if len(rest) < 2:
                raise PngError(f"the {name!r} chunk is too short")
            compressed, method, rest = rest[0], rest[1], rest[2:]
            _language, _, rest = rest.partition(b"\0")
            _translated, _, text = rest.partition(b"\0")
            if compressed and method != 0:
                raise PngError(f"the {name!r} chunk uses an unknown compression")
            text = _inflate(text, limit) if compressed else text
        if len(text) > limit:
            raise TextTooLong(f"the {name!r} text is longer than {limit / 1_048_576:g} MB")
        return name, text.decode("utf-8" if kind == b"iTXt" else "latin-1")
    except (zlib.error, UnicodeDecodeError) as err:
        raise PngError(f"the {name!r} chunk cannot be read ({err})") from None


def read_texts(data: bytes, keywords: Collection[str] = CARD_KEYWORDS) -> dict[str, str]:
    """The text chunks of the PNG ``data`` whose keyword is one of ``keywords``, by keyword (the last one wins,
    as in SillyTavern). The others are skipped unread; the texts read are bounded each and together."""
    texts: dict[str, str] = {}
    budget = MAX_TOTAL_TEXT_BYTES
    for kind, body in chunks(data):
        if kind not in TEXT_CHUNKS or keyword_of(kind, body) not in keywords:
            continue
        limit = min(MAX_TEXT_BYTES, budget)
        try:
            name, text = text_of(kind, body, limit=limit)
        except TextTooLong:
            if limit == MAX_TEXT_BYTES:
                raise
            raise TextTooLong(f"the picture's {'/'.join(keywords)} texts unpack to more than "
                              f"{MAX_TOTAL_TEXT_BYTES / 1_048_576:g} MB in all") from None
        budget -= len(text)
        texts[name] = text
    return texts


def png_chunk(kind: bytes, body: bytes) -> bytes:
    """One PNG chunk: its length, ``kind``, ``body`` and their CRC."""
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def without_texts(data: bytes) -> bytes:
    """The PNG ``data`` without its text chunks (the picture alone)."""
    return SIGNATURE + b"".join(png_chunk(k, b) for k, b in chunks(data) if k not in TEXT_CHUNKS)


def with_texts(data: bytes, texts: dict[str, str]) -> bytes:
    """The PNG ``data`` with ``texts`` as ``tEXt`` chunks (ASCII) before its image data, replacing any text
    chunks of the same keywords."""
    out = [SIGNATURE]
    added = False
    for kind, body in chunks(data):
        if kind in TEXT_CHUNKS and keyword_of(kind, body) in texts:
            continue
        if kind == b"IDAT" and not added:
            out += [png_chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("ascii")) for k, v in texts.items()]
            added = True
        out.append(png_chunk(kind, body))
    return b"".join(out)


def solid_png(colour: str, size: int = 256) -> bytes:
    """A ``size`` x ``size`` picture of one colour (``#rrggbb``): a card exported without an avatar."""
    rgb = bytes.fromhex(colour.removeprefix("#"))
    row = b"\0" + rgb * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (SIGNATURE + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", zlib.compress(row * size, 9))
            + png_chunk(b"IEND", b""))
