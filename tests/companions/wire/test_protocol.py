"""The wire protocol: exact shapes of the reference framework, JSON round trips, clear errors on bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companions.wire.protocol import (
    Action,
    CompanionMetadata,
    Message,
    ProtocolError,
    Query,
    QueryResult,
    State,
    frame_of,
    parse_body,
    parse_frame,
    parse_valid_frame,
    to_json,
    to_json_bytes,
    to_wire,
)

REFERENCE_MESSAGE = {
    "jsonrpc": "2.0",
    "method": "message.send",
    "params": {"id": "m1", "from": "user_alice", "to": ["companion_xxxx"], "message": "こんにちは！",
               "metadata": {"emotion": "happy"}},
}
REFERENCE_ACTION = {"jsonrpc": "2.0", "method": "action.send",
                    "params": {"from": "companion_xxxx", "name": "gesture", "params": {"type": "wave"}}}
REFERENCE_STATE = {"jsonrpc": "2.0", "method": "state.send",
                   "params": {"from": "c1", "messageId": "m1", "state": "speak", "importance": 7,
                              "selected": True, "closing": "pre-closing"}}
REFERENCE_QUERY = {"jsonrpc": "2.0", "method": "query.send", "id": "q1",
                   "params": {"from": "c1", "type": "speak", "body": {"message": "やあ", "emotion": "neutral"}}}
REFERENCE_RESULT = {"jsonrpc": "2.0", "id": "q1", "result": {"success": True, "body": {"image": "AAAA"}}}
REFERENCE_ERROR = {"jsonrpc": "2.0", "id": "q1", "error": "未対応のクエリタイプ: foo"}


@pytest.mark.parametrize(
    ("topic", "body", "model"),
    [
        ("messages", REFERENCE_MESSAGE, Message),
        ("actions", REFERENCE_ACTION, Action),
        ("states", REFERENCE_STATE, State),
        ("queries", REFERENCE_QUERY, Query),
        ("queries", REFERENCE_RESULT, QueryResult),
        ("queries", REFERENCE_ERROR, QueryResult),
    ],
)
def test_reference_shapes_round_trip_unchanged(topic: str, body: dict[str, Any], model: type) -> None:
    item = parse_body(topic, body)
    assert isinstance(item, model)
    assert to_wire(item) == body
    assert json.loads(to_json(item)) == body
    assert parse_frame(frame_of(item)) == (topic, item)


def test_python_names_map_to_wire_names() -> None:
    msg = Message.create(from_="c1", to=["user"], message="hi", emotion="sad")
    wire = to_wire(msg)
    assert wire["params"]["from"] == "c1"
    assert wire["params"]["metadata"] == {"emotion": "sad"}
    state = State.create(from_="c1", message_id=msg.params.id, state="listen", importance=0)
    assert to_wire(state)["params"]["messageId"] == msg.params.id
    assert QueryResult.ok("q", {"a": 1}).succeeded
    assert not QueryResult.fail("q", "boom").succeeded


def test_metadata_keeps_unknown_extra_fields_but_checks_emotion() -> None:
    body = json.loads(json.dumps(REFERENCE_MESSAGE))
    body["params"]["metadata"] = {"emotion": "neutral", "voice": "ja"}
    assert to_wire(parse_body("messages", body))["params"]["metadata"]["voice"] == "ja"
    body["params"]["metadata"] = {"emotion": "ecstatic"}
    with pytest.raises(ProtocolError, match=r"params\.metadata\.emotion"):
        parse_body("messages", body)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("not json", "invalid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"topic": "messages"}', "needs 'topic' and 'body'"),
        ('{"topic": "gossip", "body": {}}', "unknown topic"),
        ('{"topic": "messages", "body": [], "x": 1}', "unexpected frame fields"),
        ('{"topic": "messages", "body": "hi"}', "must be a JSON object"),
        ('{"topic": "messages", "body": {"method": "state.send"}}', "belongs on topic 'states'"),
        ('{"topic": "actions", "body": {"method": "nope"}}', "unknown method"),
        ('{"topic": "queries", "body": {"jsonrpc": "2.0", "id": "q"}}', "needs 'result' or 'error'"),
        ('{"topic": 5, "body": {}}', "'topic' must be a string"),
    ],
)
def test_malformed_frames_are_rejected_with_a_reason(raw: str, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        parse_frame(raw)


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({**REFERENCE_STATE, "params": {**REFERENCE_STATE["params"], "importance": 11}}, "params.importance"),
        ({**REFERENCE_STATE, "params": {**REFERENCE_STATE["params"], "state": "shout"}}, "params.state"),
        ({**REFERENCE_STATE, "params": {**REFERENCE_STATE["params"], "closing": "maybe"}}, "params.closing"),
        ({**REFERENCE_STATE, "params": {**REFERENCE_STATE["params"], "from": ""}}, "params.from"),
        ({**REFERENCE_STATE, "jsonrpc": "1.0"}, "jsonrpc"),
        ({**REFERENCE_STATE, "params": {**REFERENCE_STATE["params"], "extra": 1}}, "params.extra"),
    ],
)
def test_invalid_fields_are_named_in_the_error(body: dict[str, Any], where: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_body("states", body)
    assert where in str(info.value)


def test_metadata_model_has_the_reference_fields() -> None:
    meta = CompanionMetadata(id="c1", name="あかり", personality="明るい", story="s", sample="やっほー")
    assert set(to_wire(meta)) == {"id", "name", "personality", "story", "sample"}


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                    max_leaves=20),
       st.sampled_from(["messages", "actions", "states", "queries", "other"]))
def test_arbitrary_json_never_escapes_as_anything_but_protocol_error(body: Any, topic: str) -> None:
    try:
        item = parse_frame(json.dumps({"topic": topic, "body": body}))
    except ProtocolError:
        return
    assert to_wire(item[1]) is not None


# -- the one-pass fast path for valid frames -------------------------------------------------------------------

REFERENCE_FRAMES = [("messages", REFERENCE_MESSAGE), ("actions", REFERENCE_ACTION), ("states", REFERENCE_STATE),
                    ("queries", REFERENCE_QUERY), ("queries", REFERENCE_RESULT), ("queries", REFERENCE_ERROR)]


def _same_verdict(raw: str | bytes) -> None:
    """parse_valid_frame accepts only what parse_frame accepts, with the same item."""
    fast = parse_valid_frame(raw)
    if fast is None:
        return
    _topic, item = parse_frame(raw)  # raises if the fast path accepted something the full checks reject
    assert type(fast) is type(item)
    assert fast == item
    assert to_wire(fast) == to_wire(item)


@pytest.mark.parametrize(("topic", "body"), REFERENCE_FRAMES)
def test_the_fast_path_accepts_valid_frames_as_parse_frame_does(topic: str, body: dict[str, Any]) -> None:
    for raw in (json.dumps({"topic": topic, "body": body}), json.dumps({"body": body, "topic": topic}).encode()):
        item = parse_valid_frame(raw)
        assert item is not None
        assert (topic, item) == parse_frame(raw)


@pytest.mark.parametrize(
    "raw",
    [
        # a default method must not stand in for a missing one: parse_body dispatches on an explicit method
        json.dumps({"topic": "messages", "body": {k: v for k, v in REFERENCE_MESSAGE.items() if k != "method"}}),
        json.dumps({"topic": "queries", "body": {k: v for k, v in REFERENCE_QUERY.items() if k != "method"}}),
        json.dumps({"topic": "queries", "body": {**REFERENCE_RESULT, "method": "query.send"}}),
        json.dumps({"topic": "messages", "body": REFERENCE_ACTION}),
        json.dumps({"topic": "hello", "body": {}}),
        json.dumps({"topic": "queries", "body": REFERENCE_RESULT, "extra": 1}),
        '{"topic": "messages", "body": {"jsonrpc": "2.0", "method": "message.send", '
        '"params": {"id": "1", "from": "u", "message": "\\ud800"}}}',  # a lone surrogate
        "\ufeff" + json.dumps({"topic": "queries", "body": REFERENCE_RESULT}),
        json.dumps({"topic": "queries", "body": REFERENCE_RESULT}) + "x",
    ],
)
def test_the_fast_path_leaves_every_doubtful_frame_to_the_full_checks(raw: str) -> None:
    assert parse_valid_frame(raw) is None


def test_duplicate_keys_mean_the_same_on_both_paths() -> None:
    raw = ('{"topic": "messages", "body": {"jsonrpc": "2.0", "method": "message.send", '
           '"params": {"id": "1", "from": "user", "from": "forged", "message": "hi"}}}')
    _same_verdict(raw)
    item = parse_valid_frame(raw)
    assert item is not None
    assert item.params.from_ == "forged"


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                            | st.text(max_size=12), lambda c: st.lists(c, max_size=3)
                            | st.dictionaries(st.text(max_size=8), c, max_size=3), max_leaves=10)


@given(st.sampled_from(REFERENCE_FRAMES),
       st.lists(st.tuples(st.sampled_from(["drop", "set", "set_param", "drop_param"]),
                          st.sampled_from(["jsonrpc", "method", "id", "params", "result", "error", "from", "type",
                                           "message", "to", "importance", "state", "body", "metadata", "x"]),
                          _json_values), max_size=3),
       st.sampled_from(["messages", "actions", "states", "queries", "hello", "other"]))
def test_the_fast_path_never_accepts_what_parse_frame_rejects(
        reference: tuple[str, dict[str, Any]], edits: list[tuple[str, str, Any]], topic: str) -> None:
    _, body = reference
    body = json.loads(json.dumps(body))
    for op, key, value in edits:
        params = body.get("params") if isinstance(body.get("params"), dict) else None
        if op == "drop":
            body.pop(key, None)
        elif op == "set":
            body[key] = value
        elif params is not None and op == "set_param":
            params[key] = value
        elif params is not None:
            params.pop(key, None)
    for raw in (json.dumps({"topic": topic, "body": body}), json.dumps({"topic": reference[0], "body": body})):
        _same_verdict(raw)
        _same_verdict(raw.encode())


def test_to_json_bytes_is_to_json_in_utf8() -> None:
    item = parse_body("messages", REFERENCE_MESSAGE)
    assert to_json_bytes(item) == to_json(item).encode()
