"""The companion metadata streams: the reference's ``/aikyo/metadata/1.0.0`` (one raw JSON object, no length prefix,
the stream then closed) and Madoi's ``/madoi/companions/1.0.0`` (the same, a JSON array of every companion), and
Madoi's ``/madoi/companions-changed/1.0.0`` (an empty stream: "my companions changed, ask me again").

What a peer answers is untrusted like everything else: read within MAX_PAYLOAD_BYTES (the caller bounds the time),
decoded by companions/network/untrusted.py (depth, text, RecursionError), each companion validated strictly, at
most MAX_COMPANIONS_PER_PEER of them; anything else raises :class:`~companions.network.untrusted.Refused`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Final

from pydantic import ValidationError

from companions.network.peers import MAX_COMPANIONS_PER_PEER
from companions.network.port import MAX_PAYLOAD_BYTES
from companions.network.untrusted import Refused, read_json
from companions.wire.protocol import CompanionMetadata

METADATA_PROTOCOL: Final = "/aikyo/metadata/1.0.0"
COMPANIONS_PROTOCOL: Final = "/madoi/companions/1.0.0"
CHANGED_PROTOCOL: Final = "/madoi/companions-changed/1.0.0"
"""A Madoi node whose cast changed opens this stream to each connected peer and closes it without a word; a Madoi
peer then asks again on COMPANIONS_PROTOCOL (what it reads is checked as at first). The reference has no such
thing: its nodes ask for metadata once per peer and answer nobody twice."""
MAX_COMPANIONS: Final = MAX_COMPANIONS_PER_PEER


async def read_all(stream: Any) -> bytes:
    """Everything the peer writes before it closes, but never more than MAX_PAYLOAD_BYTES + 1 bytes."""
    from libp2p.network.stream.exceptions import StreamEOF

    chunks: list[bytes] = []
    size = 0
    try:
        while size <= MAX_PAYLOAD_BYTES:
            chunk = await stream.read(MAX_PAYLOAD_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except StreamEOF:
        pass
    finally:
        with contextlib.suppress(Exception):  # the peer reset it: what was read is what there is
            await stream.close()
    return b"".join(chunks)[:MAX_PAYLOAD_BYTES + 1]


def parse_metadata(raw: bytes, many: bool) -> tuple[CompanionMetadata, ...]:
    """The companions a peer announced: one object (the reference's protocol), or an array (``many``: Madoi's).

    Raises:
        Refused: oversized, not JSON, too deep, bad text, not metadata, or more companions than a peer may run here.
    """
    data = read_json(raw, max_bytes=MAX_PAYLOAD_BYTES)
    items: Sequence[Any] = data if many and isinstance(data, list) else [data]
    if len(items) > MAX_COMPANIONS:
        raise Refused("too many", f"{len(items)} companions (a peer may run {MAX_COMPANIONS} here)")
    try:
        return tuple(CompanionMetadata.model_validate(item) for item in items)
    except ValidationError as err:
        raise Refused("invalid", f"not companion metadata: {err.errors(include_url=False)[:1]}") from None
