"""JSON-RPC error frames the bridge answers a rejected frame with; the connection lives on."""

from __future__ import annotations

import enum
import json


class ErrorCode(enum.IntEnum):
    """JSON-RPC 2.0 codes: the standard ones, then the bridge's own (-32000 .. -32099 are server errors)."""

    PARSE_ERROR = -32700  # not JSON
    INVALID_REQUEST = -32600  # JSON, but not a valid frame or wire item
    INTERNAL_ERROR = -32603
    UNAUTHENTICATED = -32001  # token missing or wrong
    FORBIDDEN = -32002  # forged `from`, a topic clients may not publish, a query the client may not answer
    TOO_LARGE = -32003
    RATE_LIMITED = -32004
    REJECTED_RESULT = -32005  # a QueryResult for no pending query, or answered already
    OVER_QUOTA = -32006  # the connection stored as many messages (or bytes) as it may this minute


class FrameRejected(Exception):
    """A client frame that is dropped; becomes one error frame."""

    def __init__(self, code: ErrorCode, message: str, item_id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.item_id = item_id


def error_frame(code: ErrorCode, message: str, item_id: str | None = None) -> str:
    """``{"jsonrpc":"2.0","id":<id of the rejected item or null>,"error":{"code","message"}}``."""
    return json.dumps({"jsonrpc": "2.0", "id": item_id, "error": {"code": int(code), "message": message}},
                      ensure_ascii=False)
