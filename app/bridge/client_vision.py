"""A client's picture made readable for a companion whose model takes no images.

The app's camera adds an on-device description to its answers (app/devices/vision_description.py); a client's
``vision`` answer carries only the picture (kyoko: a PNG as base64 or a data URL). The bridge adds the same
description to it, in an executor thread, before the broker gets it, so that a text-only model (the default local
one) learns something from the client's camera too. Only PNG and JPEG pictures up to ``MAX_PIXELS`` are decoded
(their size is read from the header first: a small file cannot make OpenCV allocate gigabytes); anything else is
passed on as it came.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import struct
from typing import Final

from companions.devices.query_bodies import VisionDescription, VisionPicture
from companions.wire.protocol import QueryResult, QueryResultBody

log = logging.getLogger(__name__)

MAX_PIXELS: Final = 4096 * 4096


def picture_of(result: QueryResult) -> bytes | None:
    """The PNG or JPEG a successful answer carries without a description, small enough to decode; else ``None``.

    Cheap (base64 and a header): called on the loop, so that an answer with nothing to describe costs no thread.
    """
    if not result.succeeded or result.result is None:
        return None
    picture = VisionPicture.read(result.result.body)
    image = picture.image
    if image is None or picture.description is not None:
        return None
    try:
        raw = base64.b64decode(image.partition(",")[2] if image.startswith("data:") else image)
    except (binascii.Error, ValueError):
        return None
    size = image_size(raw)
    return raw if size is not None and 0 < size[0] * size[1] <= MAX_PIXELS else None


async def with_description(result: QueryResult, picture: bytes) -> QueryResult:
    """``result`` with ``description`` / ``description_details`` of ``picture`` (from :func:`picture_of`) added."""
    assert result.result is not None
    try:
        description = await asyncio.to_thread(_describe, picture)
    except Exception:  # a broken picture must not cost the answer
        log.warning("bridge: the client's picture for query %s could not be described", result.id, exc_info=True)
        return result
    if description is None:
        return result
    body = result.result.body
    described = body | {"description": description.summary, "description_details": description.model_dump(mode="json")}
    return QueryResult(id=result.id, result=QueryResultBody(success=True, body=described))


def _describe(raw: bytes) -> VisionDescription | None:
    import cv2  # here: importing the bridge stays cheap
    import numpy as np

    from app.devices.vision_description import describe_frame

    frame = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    if frame is None:
        return None
    description, _ = describe_frame(np.asarray(frame, dtype=np.uint8))
    return description


def image_size(raw: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG header, ``None`` for anything else."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24 and raw[12:16] == b"IHDR":
        width, height = struct.unpack(">II", raw[16:24])
        return width, height
    if raw[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 < len(raw):
        if raw[i] != 0xFF:
            return None
        marker = raw[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            i += 2
            continue
        length = struct.unpack(">H", raw[i + 2:i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            height, width = struct.unpack(">HH", raw[i + 5:i + 9])
            return width, height
        i += 2 + length
    return None
