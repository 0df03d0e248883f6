"""Frames refused at the door because what they carry could not be written out again.

A client's frame is relayed to every other client, stored, and put into the companions' prompts. JSON that parses
may still fail there: ``"\\ud800"`` (a lone surrogate) decodes to a ``str`` that UTF-8 cannot encode, and a deeply
nested value (``[[[[...]]]]``) overflows a serializer's depth limit. Such a frame used to be accepted and then fail
on every relay (a traceback and an error notification each time); it is now refused before anything acts on it,
with an error frame, like any other invalid frame.

The checks cost a valid frame almost nothing: a frame with no more opening brackets than :data:`MAX_DEPTH` cannot
nest deeper, and the one-pass parser of the bridge's fast path (companions.wire.protocol.parse_valid_frame) itself
refuses lone surrogates; only the frames that miss the fast path are walked and encoded again.
"""

from __future__ import annotations

import json
from typing import Any, Final

from app.bridge.errors import ErrorCode, FrameRejected
from companions.common.untrusted_data import depth_of

MAX_DEPTH: Final = 32  # nesting levels of arrays and objects in one frame; the protocol's frames use 5 or 6


def may_nest_deeply(raw: str | bytes) -> bool:
    """False when ``raw`` cannot nest deeper than :data:`MAX_DEPTH` (it has no more opening brackets than that)."""
    if isinstance(raw, bytes):
        return raw.count(b"{") + raw.count(b"[") > MAX_DEPTH
    return raw.count("{") + raw.count("[") > MAX_DEPTH


def check_writable(raw: str | bytes, data: Any) -> None:
    """Refuses a decoded frame that could not be serialized again (see the module's docstring).

    Raises:
        FrameRejected: nesting deeper than :data:`MAX_DEPTH`, or text UTF-8 cannot encode (a lone surrogate).
    """
    if may_nest_deeply(raw) and depth_of(data, MAX_DEPTH) > MAX_DEPTH:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"the frame nests deeper than {MAX_DEPTH} levels")
    # A lone surrogate can only come from a \u escape (a text frame is valid UTF-8), or from bytes that Python's
    # JSON decoder reads with "surrogatepass".
    if isinstance(raw, bytes) or "\\u" in raw:
        try:
            json.dumps(data, ensure_ascii=False).encode()
        except (UnicodeEncodeError, ValueError, RecursionError) as err:
            raise FrameRejected(ErrorCode.INVALID_REQUEST,
                                f"the frame cannot be written out again: {type(err).__name__}: {err}"[:300]) from None

