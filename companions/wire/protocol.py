"""The wire protocol shared with the reference framework (seeds 000 and 003).

Every shape is a pydantic model validated at each boundary. Field names are exactly those of the reference
framework (``from``, ``to``, ``messageId`` ...) so that external clients keep working; Python code uses the
attribute ``from_`` for ``from``. Serialise with :func:`to_wire` (aliases, no ``None`` fields) and parse untrusted
input with :func:`parse_body` / :func:`parse_frame`, which raise :class:`ProtocolError` with a readable reason.
"""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from companions.common.untrusted_data import Unreadable, parse_json

JSONRPC: Final = "2.0"

Topic: TypeAlias = Literal["messages", "actions", "states", "queries"]
WIRE_TOPICS: Final[tuple[Topic, ...]] = ("messages", "actions", "states", "queries")
Emotion: TypeAlias = Literal["happy", "sad", "angry", "neutral"]
EMOTIONS: Final[tuple[Emotion, ...]] = ("happy", "sad", "angry", "neutral")
Speech: TypeAlias = Literal["speak", "listen"]
Closing: TypeAlias = Literal["none", "pre-closing", "closing", "terminal"]
CLOSING_ORDER: Final[tuple[Closing, ...]] = ("none", "pre-closing", "closing", "terminal")

NonEmpty = Annotated[str, Field(min_length=1, max_length=256)]
MAX_RECIPIENTS: Final = 64  # ids in one message's ``to`` (Madoi's limit: the reference's schema sets none)
MessageText = Annotated[str, Field(max_length=100_000)]


class ProtocolError(ValueError):
    """Raised when input does not match the wire protocol; ``str()`` says what and where."""


def new_id() -> str:
    """Returns a fresh id for a message or query (a UUID4, like the reference's ``crypto.randomUUID``)."""
    return str(uuid.uuid4())


class _Wire(BaseModel):
    """Base of every wire shape: unknown fields are rejected, names may be given by alias or attribute."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, str_strip_whitespace=False)


class _Open(BaseModel):
    """Base of free-form parts (metadata): known fields are validated, extra ones are kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


class MessageMetadata(_Open):
    emotion: Emotion | None = None


class MessageParams(_Wire):
    id: NonEmpty
    from_: NonEmpty = Field(alias="from")
    to: list[NonEmpty] = Field(default_factory=list, max_length=MAX_RECIPIENTS)
    message: MessageText
    metadata: MessageMetadata | None = None


class Message(_Wire):
    """``message.send``: one utterance from the user or a companion."""

    jsonrpc: Literal["2.0"] = JSONRPC
    method: Literal["message.send"] = "message.send"
    params: MessageParams

    @classmethod
    def create(
        cls,
        *,
        from_: str,
        message: str,
        to: list[str] | None = None,
        emotion: Emotion | None = None,
        id: str | None = None,
    ) -> Message:
        metadata = MessageMetadata(emotion=emotion) if emotion is not None else None
        return cls(
            params=MessageParams(
                id=id or new_id(), from_=from_, to=list(to or []), message=message, metadata=metadata
            )
        )


class ActionParams(_Wire):
    from_: NonEmpty = Field(alias="from")
    name: NonEmpty
    params: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] | None = None


class Action(_Wire):
    """``action.send``: something a client should perform, e.g. a gesture."""

    jsonrpc: Literal["2.0"] = JSONRPC
    method: Literal["action.send"] = "action.send"
    params: ActionParams

    @classmethod
    def create(cls, *, from_: str, name: str, params: dict[str, Any] | None = None) -> Action:
        return cls(params=ActionParams(from_=from_, name=name, params=dict(params or {})))


class StateParams(_Wire):
    from_: NonEmpty = Field(alias="from")
    messageId: NonEmpty  # the wire name
    state: Speech
    importance: int = Field(ge=0, le=10)
    selected: bool
    closing: Closing = "none"


class State(_Wire):
    """``state.send``: a companion's vote on whether it wants the next turn."""

    jsonrpc: Literal["2.0"] = JSONRPC
    method: Literal["state.send"] = "state.send"
    params: StateParams

    @classmethod
    def create(
        cls,
        *,
        from_: str,
        message_id: str,
        state: Speech,
        importance: int,
        selected: bool = False,
        closing: Closing = "none",
    ) -> State:
        return cls(
            params=StateParams(
                from_=from_,
                messageId=message_id,
                state=state,
                importance=importance,
                selected=selected,
                closing=closing,
            )
        )


class QueryParams(_Wire):
    from_: NonEmpty = Field(alias="from")
    type: NonEmpty
    body: dict[str, Any] | None = None


class Query(_Wire):
    """``query.send``: a companion asks a client for something (``vision``, ``speak`` ...)."""

    jsonrpc: Literal["2.0"] = JSONRPC
    method: Literal["query.send"] = "query.send"
    id: NonEmpty
    params: QueryParams

    @classmethod
    def create(cls, *, from_: str, type: str, body: dict[str, Any] | None = None, id: str | None = None) -> Query:
        return cls(id=id or new_id(), params=QueryParams(from_=from_, type=type, body=body))


class QueryResultBody(_Wire):
    success: bool
    body: dict[str, Any] = Field(default_factory=dict)


class QueryResult(_Wire):
    """The answer to a :class:`Query`: either ``result`` or ``error`` (never neither)."""

    jsonrpc: Literal["2.0"] = JSONRPC
    id: NonEmpty
    result: QueryResultBody | None = None
    error: str | None = None

    @model_validator(mode="after")
    def _result_or_error(self) -> QueryResult:
        if self.result is None and self.error is None:
            raise ValueError("a QueryResult needs 'result' or 'error'")
        return self

    @classmethod
    def ok(cls, query_id: str, body: dict[str, Any] | None = None) -> QueryResult:
        return cls(id=query_id, result=QueryResultBody(success=True, body=dict(body or {})))

    @classmethod
    def fail(cls, query_id: str, error: str) -> QueryResult:
        return cls(id=query_id, error=error)

    @property
    def succeeded(self) -> bool:
        return self.result is not None and self.result.success and self.error is None


class CompanionMetadata(_Wire):
    """Who a companion is; shown to the other companions by the companion-network knowledge."""

    id: NonEmpty
    name: NonEmpty
    personality: str = ""
    story: str = ""
    sample: str = ""


WireItem: TypeAlias = Message | Action | State | Query | QueryResult


def topic_of(item: WireItem) -> Topic:
    """Returns the topic an item travels on."""
    if isinstance(item, Message):
        return "messages"
    if isinstance(item, Action):
        return "actions"
    if isinstance(item, State):
        return "states"
    return "queries"


def to_wire(item: BaseModel) -> dict[str, Any]:
    """The JSON-ready dict of a model, with wire names and without unset optional fields."""
    return item.model_dump(mode="json", by_alias=True, exclude_none=True)


def to_json(item: BaseModel) -> str:
    return item.model_dump_json(by_alias=True, exclude_none=True)


def to_json_bytes(item: BaseModel) -> bytes:
    """:func:`to_json` as UTF-8, without decoding pydantic's output to ``str`` (for sockets)."""
    return type(item).__pydantic_serializer__.to_json(item, by_alias=True, exclude_none=True)


def _describe(err: ValidationError) -> str:
    parts = []
    for e in err.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in e["loc"]) or "<root>"
        parts.append(f"{loc}: {e['msg']}")
    more = len(err.errors()) - 5
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


_BY_METHOD: Final[dict[str, tuple[Topic, type[Message | Action | State | Query]]]] = {
    "message.send": ("messages", Message),
    "action.send": ("actions", Action),
    "state.send": ("states", State),
    "query.send": ("queries", Query),
}


def parse_body(topic: str, body: Any) -> WireItem:
    """Validates a decoded JSON body that claims to travel on ``topic``.

    Raises:
        ProtocolError: the topic is unknown, or the body is not a valid item of that topic.
    """
    if topic not in WIRE_TOPICS:
        raise ProtocolError(f"unknown topic {topic!r} (expected one of {', '.join(WIRE_TOPICS)})")
    if not isinstance(body, dict):
        raise ProtocolError(f"{topic}: body must be a JSON object, got {type(body).__name__}")
    method = body.get("method")
    model: type[WireItem]
    if topic == "queries" and method is None:
        model = QueryResult
    else:
        if not isinstance(method, str) or method not in _BY_METHOD:
            raise ProtocolError(f"{topic}: unknown method {method!r}")
        expected_topic, model = _BY_METHOD[method]
        if expected_topic != topic:
            raise ProtocolError(f"{topic}: method {method!r} belongs on topic {expected_topic!r}")
    try:
        return model.model_validate(body)
    except ValidationError as err:
        raise ProtocolError(f"{topic}: invalid {model.__name__}: {_describe(err)}") from None


class Frame(_Wire):
    """The bridge framing of the reference Firehose server: ``{"topic": ..., "body": ...}``."""

    topic: Topic
    body: dict[str, Any]


def parse_frame(raw: str | bytes) -> tuple[Topic, WireItem]:
    """Parses one bridge frame from raw JSON text.

    Raises:
        ProtocolError: invalid JSON, wrong framing, or an invalid body.
    """
    try:
        data = parse_json(raw)
    except Unreadable as err:  # not JSON, or nested deeper than any frame (RecursionError included)
        raise ProtocolError(f"invalid JSON: {err}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"a frame must be a JSON object, got {type(data).__name__}")
    extra = set(data) - {"topic", "body"}
    if extra:
        raise ProtocolError(f"unexpected frame fields: {', '.join(sorted(extra))}")
    if "topic" not in data or "body" not in data:
        raise ProtocolError("a frame needs 'topic' and 'body'")
    topic = data["topic"]
    if not isinstance(topic, str):
        raise ProtocolError("'topic' must be a string")
    item = parse_body(topic, data["body"])
    return topic_of(item), item


class _MessagesFrame(_Wire):
    topic: Literal["messages"]
    body: Message


class _ActionsFrame(_Wire):
    topic: Literal["actions"]
    body: Action


class _StatesFrame(_Wire):
    topic: Literal["states"]
    body: State


class _QueriesFrame(_Wire):
    topic: Literal["queries"]
    # Disjoint (a Query needs ``params``, which a QueryResult forbids), so the order only decides which one is
    # tried first: results are what clients send most.
    body: Annotated[QueryResult | Query, Field(union_mode="left_to_right")]


_FRAME: Final = TypeAdapter(
    Annotated[_MessagesFrame | _ActionsFrame | _StatesFrame | _QueriesFrame, Field(discriminator="topic")])


def parse_valid_frame(raw: str | bytes) -> WireItem | None:
    """The item of a valid bridge frame, parsed and validated in one pass over the raw text; ``None`` otherwise.

    A fast path for the common case: it accepts only frames that :func:`parse_frame` accepts, with the same
    item, and returns ``None`` for everything else (including some valid frames, e.g. UTF-16 bytes), which the
    caller then puts through :func:`parse_frame` or :func:`parse_body` to accept it or learn why not.
    """
    try:
        body = _FRAME.validate_json(raw).body
    except ValidationError:
        return None
    if not isinstance(body, QueryResult) and "method" not in body.model_fields_set:
        return None  # parse_body dispatches on an explicit ``method``, never on the model's default
    return body


def frame_of(item: WireItem) -> str:
    """Serialises an item in the bridge framing."""
    return json.dumps({"topic": topic_of(item), "body": to_wire(item)}, ensure_ascii=False)
