"""The three dialects the bridge speaks, each client in its own: how items go out, and what comes in.

* ``reference`` (the default): the reference framework's firehose. Out: the bare JSON-RPC body of every message,
  action and query (no ``{topic, body}`` wrapper; a client tells them apart by ``method``), a QueryResult only to
  the client that asked; no states (the firehose forwards none). In: ``{"topic", "body"}`` with a JSON-RPC body,
  or the bare body itself (the firehose before 1.5 took those).
* ``legacy``: the older client (kyoko's companion-kit, before JSON-RPC). Out: flat items,
  ``{id, from, to, message, metadata?}``, ``{id, from, type, body?}``, ``{from, name, params, metadata?}``, no
  states. In: a flat message, bare or as ``{"topic": "messages", "body": ...}``, and a query answer
  ``{"topic": "query-results", "body": {"id", "success", "body"}}`` whose body may be a data URL string (an image:
  it becomes ``{"image": <data URL>, "mime"}``, as the app's camera answers).
* ``madoi``: Madoi's own frames for a client that sends a ``hello`` (auth.py): ``{"topic", "body"}`` for every
  item, states included, and the streamed text it asks for (streams.py).

A client's dialect is chosen by its URL (``ws://host:port/?dialect=legacy``), its hello, or else detected from
its first frame that carries an item; until then it gets the bridge's default (``reference``). Whatever its
dialect, the bridge understands every form a client sends.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Final
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.bridge.auth import HELLO_TOPIC
from app.bridge.errors import ErrorCode, FrameRejected
from companions.wire.protocol import (
    Action,
    Message,
    MessageText,
    NonEmpty,
    ProtocolError,
    Query,
    QueryResult,
    QueryResultBody,
    State,
    WireItem,
    parse_body,
    to_json_bytes,
    to_wire,
    topic_of,
)

LEGACY_RESULTS_TOPIC: Final = "query-results"
_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(;[^,]*)?,")


class Dialect(enum.StrEnum):
    REFERENCE = "reference"
    LEGACY = "legacy"
    MADOI = "madoi"


def dialect_of(name: str) -> Dialect:
    try:
        return Dialect(name.strip().lower())
    except ValueError:
        raise FrameRejected(ErrorCode.INVALID_REQUEST,
                            f"unknown dialect {name!r} (one of {', '.join(d.value for d in Dialect)})") from None


@dataclass(frozen=True)
class ConnectOptions:
    """What a client's URL asks for: ``?dialect=legacy&companion=akari&token=...`` (all optional)."""

    dialect: Dialect | None = None
    companion: str | None = None
    token: str | None = None


def options_of(path: str) -> ConnectOptions:
    """The options in a request path; unknown parameters are ignored, an unknown dialect is refused."""
    query = parse_qs(urlsplit(path).query)

    def first(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    name = first("dialect")
    return ConnectOptions(dialect=dialect_of(name) if name else None, companion=first("companion"),
                          token=first("token"))


# -- out --------------------------------------------------------------------------------------------------------


def encode(item: WireItem, dialect: Dialect) -> bytes | None:
    """The frame for ``item`` in ``dialect`` as UTF-8 JSON text, or ``None`` when that dialect never carries it."""
    if dialect is Dialect.MADOI:
        return b'{"topic":"%s","body":%s}' % (topic_of(item).encode(), to_json_bytes(item))
    if isinstance(item, State):
        return None  # the reference's firehose forwards no states, and its clients know no ``state.send``
    if dialect is Dialect.REFERENCE:
        return to_json_bytes(item)
    return _flat(item)


def _flat(item: Message | Action | Query | QueryResult) -> bytes:
    flat: dict[str, Any]
    if isinstance(item, QueryResult):
        flat = {"id": item.id, "success": item.succeeded}
        if item.result is not None:
            flat["body"] = item.result.body
        if item.error is not None:
            flat["error"] = item.error
    else:
        flat = {"id": item.id} if isinstance(item, Query) else {}
        flat |= to_wire(item.params)
    return json.dumps(flat, ensure_ascii=False, separators=(",", ":")).encode()


# -- in ---------------------------------------------------------------------------------------------------------


class _LegacyMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: NonEmpty
    from_: NonEmpty = Field(alias="from")
    to: list[NonEmpty] | NonEmpty = Field(default_factory=list)
    message: MessageText
    metadata: dict[str, Any] | None = None


class _LegacyResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: NonEmpty
    success: bool
    body: Annotated[str, Field(max_length=50_000_000)] | dict[str, Any] | None = None
    error: str | None = None


def _legacy_message(body: Any) -> Message:
    try:
        flat = _LegacyMessage.model_validate(body)
    except ValidationError as err:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"messages: invalid message: {_first(err)}") from None
    to = [flat.to] if isinstance(flat.to, str) else flat.to
    data: dict[str, Any] = {"id": flat.id, "from": flat.from_, "to": to, "message": flat.message}
    if flat.metadata is not None:
        data["metadata"] = flat.metadata
    try:
        return Message.model_validate({"jsonrpc": "2.0", "method": "message.send", "params": data})
    except ValidationError as err:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"messages: invalid message: {_first(err)}") from None


def _legacy_result(body: Any) -> QueryResult:
    try:
        flat = _LegacyResult.model_validate(body)
    except ValidationError as err:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"query-results: invalid result: {_first(err)}") from None
    if isinstance(flat.body, str):
        match = _DATA_URL.match(flat.body)
        answer: dict[str, Any] = {"image": flat.body}
        if match is not None and match["mime"]:
            answer["mime"] = match["mime"]
    else:
        answer = flat.body or {}
    if not flat.success:
        return QueryResult(id=flat.id, result=QueryResultBody(success=False, body=answer),
                           error=flat.error or "the client could not answer")
    return QueryResult(id=flat.id, result=QueryResultBody(success=True, body=answer))


def _first(err: ValidationError) -> str:
    first = err.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in first['loc']) or 'body'}: {first['msg']}"


def _is_flat_message(body: Any) -> bool:
    return isinstance(body, dict) and "message" in body and "jsonrpc" not in body and "method" not in body


def decode(data: Any) -> tuple[WireItem, Dialect | None]:
    """The item a decoded client frame carries, and the dialect the frame shows (``None``: any but legacy).

    Raises:
        FrameRejected: not a frame of any dialect, or an invalid item (the message says which and why).
    """
    if not isinstance(data, dict):
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"a frame must be a JSON object, got {type(data).__name__}")
    if "jsonrpc" in data:  # a bare JSON-RPC body (the firehose before 1.5)
        return _bare(data), Dialect.REFERENCE
    if _is_flat_message(data):
        return _legacy_message(data), Dialect.LEGACY
    if set(data) != {"topic", "body"}:
        raise FrameRejected(ErrorCode.INVALID_REQUEST,
                            "a frame is {\"topic\", \"body\"}, a bare JSON-RPC body, or a flat message")
    topic, body = data["topic"], data["body"]
    if not isinstance(topic, str):
        raise FrameRejected(ErrorCode.INVALID_REQUEST, "'topic' must be a string")
    if topic == HELLO_TOPIC:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, "hello must be the first frame")
    if topic == LEGACY_RESULTS_TOPIC:
        return _legacy_result(body), Dialect.LEGACY
    if topic == "messages" and _is_flat_message(body):
        return _legacy_message(body), Dialect.LEGACY
    try:
        return parse_body(topic, body), None
    except ProtocolError as err:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, str(err)) from None


def _bare(body: dict[str, Any]) -> WireItem:
    method = body.get("method")
    topics = {"message.send": "messages", "action.send": "actions", "state.send": "states", "query.send": "queries"}
    topic = "queries" if method is None else topics.get(method) if isinstance(method, str) else None
    if topic is None:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"unknown method {method!r}")
    try:
        return parse_body(topic, body)
    except ProtocolError as err:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, str(err)) from None
