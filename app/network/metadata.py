"""The companion metadata streams: the reference's ``/aikyo/metadata/1.0.0`` (one raw JSON object, no length prefix,
the stream then closed) and Madoi's ``/madoi/companions/1.0.0`` (the same, a JSON array of every companion)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from companions.network.port import MAX_PAYLOAD_BYTES
from companions.protocol import CompanionMetadata

METADATA_PROTOCOL: Final = "/aikyo/metadata/1.0.0"
COMPANIONS_PROTOCOL: Final = "/madoi/companions/1.0.0"
MAX_COMPANIONS: Final = 32


async def read_all(stream: Any) -> bytes:
    from libp2p.network.stream.exceptions import StreamEOF

    chunks: list[bytes] = []
    size = 0
    try:
        while size <= MAX_PAYLOAD_BYTES:
            chunk = await stream.read(MAX_PAYLOAD_BYTES)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except StreamEOF:
        pass
    finally:
        await stream.close()
    return b"".join(chunks)[:MAX_PAYLOAD_BYTES + 1]


def parse_metadata(raw: bytes, many: bool) -> tuple[CompanionMetadata, ...] | None:
    if len(raw) > MAX_PAYLOAD_BYTES:
        return None
    try:
        data = json.loads(raw)
        items: Sequence[Any] = data if many and isinstance(data, list) else [data]
        return tuple(CompanionMetadata.model_validate(item) for item in items[:MAX_COMPANIONS])
    except (ValueError, TypeError):
        return None
