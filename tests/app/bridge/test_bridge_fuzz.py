"""Fuzz: 10,000+ malformed or hostile frames over one connection; each gets an error, nothing reaches the bus.

Every frame is of one named kind (``KINDS``); the test counts the frames sent and refused per kind. Among
them the kinds the door refuses: lone surrogates, nesting deeper than 32 levels that JSON still parses, queries from
a client (whoever it claims to be), and messages over the connection's quota of stored bytes."""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

from websockets.asyncio.client import connect

from app.bridge import BridgeServer
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Action, Message, Query, QueryResult, State, WireItem, frame_of, to_wire
from companions.wire.query_broker import QueryBroker
from tests.waiting import wait_until

FRAMES = 10_500
BATCH = 200  # frames in flight at once; below the send queue size, so no error frame is dropped
MAX_FRAME_BYTES = 4096
QUOTA_BYTES = 1024  # what one connection may have stored a minute (the frames above are shorter)


def _valid_bodies(rng: random.Random) -> list[dict[str, Any]]:
    return [
        {"topic": "messages", "body": to_wire(Message.create(from_="user", message="hi", to=["c1"]))},
        {"topic": "actions", "body": to_wire(Action.create(from_="c1", name="wave"))},
        {"topic": "states", "body": to_wire(State.create(from_="c1", message_id="m", state="speak", importance=3))},
        {"topic": "queries", "body": to_wire(Query.create(from_="user", type="vision"))},
        {"topic": "queries", "body": to_wire(QueryResult.ok(f"q{rng.random()}", {}))},
    ]


def _junk(rng: random.Random) -> Any:
    return rng.choice([None, True, 0, -1, 1e308, "", "x" * rng.randint(0, 50), [], {}, [1, "a"], {"a": {"b": []}}])


def _mutate(rng: random.Random, frame: dict[str, Any]) -> dict[str, Any]:
    """Breaks a valid frame in one of many ways (every result must be invalid or forbidden)."""
    body = dict(frame["body"])
    params = dict(body.get("params", {}))
    kind = rng.randrange(12)
    if kind == 0:
        return {"topic": rng.choice(["events", "hello", "admin", "", "MESSAGES", "queries "]), "body": body}
    if kind == 1:
        return {"topic": frame["topic"], "body": body, rng.choice(["x", "id", "from"]): _junk(rng)}
    if kind == 2:
        return {rng.choice(["topic", "body"]): frame[rng.choice(["topic", "body"])]}
    if kind == 3:
        return {"topic": _junk(rng) if rng.random() < 0.5 else 7, "body": body}
    if kind == 4:
        return {"topic": frame["topic"], "body": _junk(rng)}
    if kind == 5:
        body["jsonrpc"] = rng.choice(["1.0", "2", None, 2.0])
    elif kind == 6:
        body["method"] = rng.choice(["message.sent", "query.send", "state.send", "", None, "__class__"])
        if body["method"] == "query.send" and frame["topic"] == "queries":
            body.pop("id", None)
    elif kind == 7:
        params.pop(rng.choice(list(params) or ["x"]), None)
        params["unexpected"] = _junk(rng)
        body["params"] = params
    elif kind == 8:
        params["from"] = rng.choice(["c1", "companion_a", "admin", "root", "USER", "user ", "", 3])
        body["params"] = params
    elif kind == 9:
        params[rng.choice(["importance", "to", "message", "type", "state", "metadata"])] = rng.choice(
            [11, -1, [3], {"emotion": "furious"}])  # invalid for each of those keys
        body["params"] = params
    elif kind == 10:
        body = {"jsonrpc": "2.0", "id": _junk(rng), "result": _junk(rng), "error": _junk(rng)}
    else:
        body["id"] = rng.choice(["", None, 5, "x" * 300, ["id"]])
    return {"topic": frame["topic"], "body": body}


KINDS = ("binary garbage", "truncated JSON", "not a frame object", "nesting past JSON's limit", "oversize",
         "forbidden items", "stray results", "bad text", "mutated or legacy", "mutated or legacy (2)",
         "lone surrogates", "nesting 33-900 deep", "client queries", "over the stored-bytes quota")


def _hostile_frame(rng: random.Random, i: int) -> tuple[str, str | bytes]:
    """One hostile frame and its kind (``KINDS``, in turn)."""
    kind = KINDS[i % len(KINDS)]
    return kind, _frame_of_kind(rng, i, KINDS.index(kind))


def _frame_of_kind(rng: random.Random, i: int, kind: int) -> str | bytes:
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))  # binary garbage
    if kind == 1:
        text = json.dumps(rng.choice(_valid_bodies(rng)))
        return text[: rng.randrange(len(text))]  # truncated JSON
    if kind == 2:
        return json.dumps(_junk(rng))  # JSON that is not a frame object
    if kind == 3:
        depth = rng.randint(500, 1500)
        return "[" * depth + "]" * depth if rng.random() < 0.5 else '{"a":' * depth + "1" + "}" * depth
    if kind == 4:
        return json.dumps({"topic": "messages", "body": {"pad": "z" * (MAX_FRAME_BYTES + rng.randint(1, 5000))}})
    if kind == 5:  # well-formed, but forbidden: actions, states, forged senders
        forged: list[WireItem] = [
            Action.create(from_="user", name="wave"),
            State.create(from_="user", message_id="m", state="listen", importance=1),
            Message.create(from_=rng.choice(["c1", "companion_a", "system"]), message="impostor"),
        ]
        return frame_of(rng.choice(forged))
    if kind == 6:  # results for queries nobody sent
        return frame_of(QueryResult.ok(f"stray-{i}", {"image": "x"}))
    if kind == 7:
        if rng.random() < 0.2:  # invalid UTF-8 in a binary frame (as text, the WebSocket layer itself closes 1007)
            return '{"topic": "messages", "body": "\ud800"}'.encode("utf-8", "surrogatepass")
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(20))
    if kind == 10:  # a lone surrogate anywhere JSON takes one: parses, but could never be written out again
        lone = chr(rng.randrange(0xD800, 0xE000))
        frame = {"topic": "messages", "body": to_wire(Message.create(from_="user", message="hi"))}
        where = rng.choice(["metadata", "key", "to", "bare"])
        if where == "metadata":
            frame["body"]["params"]["metadata"] = {"note": f"a{lone}b"}
        elif where == "key":
            frame["body"]["params"]["metadata"] = {lone: 1}
        elif where == "to":
            frame["body"]["params"]["to"] = [f"c{lone}"]
        else:
            return json.dumps(frame["body"] | {"x": lone}) if rng.random() < 0.5 else json.dumps(
                {"topic": "hello", "body": {"metadata": {"id": "kumo", "name": f"K{lone}"}}})
        return json.dumps(frame, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass") \
            if rng.random() < 0.2 else json.dumps(frame)
    if kind == 11:  # deep, but within what Python's JSON decoder parses
        depth = rng.randint(33, 900)
        frame = {"topic": "messages", "body": to_wire(Message.create(from_="user", message="hi"))}
        nested = json.loads("[" * depth + "]" * depth if rng.random() < 0.5 else '{"a":' * depth + "1" + "}" * depth)
        frame["body"]["params"]["metadata"] = {"x": nested}
        return json.dumps(frame)
    if kind == 12:  # a client's query, as anyone: the app's camera and voice answer its own companions only
        sender = rng.choice(["user", "user_evil", "companion_a", "c1", "robot"])
        return frame_of(Query.create(from_=sender, type=rng.choice(["vision", "speak", "time", "x"])))
    if kind == 13:  # a valid message, larger than a minute's bytes of this connection
        return frame_of(Message.create(from_="user", message="q" * rng.randint(QUOTA_BYTES + 1, 3 * QUOTA_BYTES)))
    if rng.random() < 0.3:
        return _legacy_hostile(rng, i)
    return json.dumps(_mutate(rng, rng.choice(_valid_bodies(rng))), ensure_ascii=rng.random() < 0.5)


def _legacy_hostile(rng: random.Random, i: int) -> str:
    """Frames in the older client's dialect (flat items, ``query-results``), every one invalid or forbidden."""
    flat: dict[str, Any] = {"id": f"flat-{i}", "from": rng.choice(["c1", "companion_a", "system", "USER", "user "]),
                            "to": ["c1"], "message": "impostor"}
    kind = rng.randrange(5)
    if kind == 0:  # an answer to a query nobody sent
        return json.dumps({"topic": "query-results",
                           "body": {"id": f"stray-{i}", "success": True, "body": "data:image/png;base64,AAAA"}})
    if kind == 1:
        return json.dumps({"topic": "query-results", "body": _junk(rng)})
    if kind == 2:  # forged sender, bare or wrapped
        return json.dumps(flat if rng.random() < 0.5 else {"topic": "messages", "body": flat})
    if kind == 3:
        flat |= {"from": "user", rng.choice(["to", "message", "id"]): rng.choice([5, None, {"a": 1}, [[1]]])}
        return json.dumps(flat)
    return json.dumps({"topic": "messages", "body": flat | {"from": "user", "extra": _junk(rng)}})


async def test_10000_hostile_frames_each_get_an_error_and_nothing_reaches_the_bus() -> None:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    wire: list[WireItem] = []
    bus.subscribe(("messages", "actions", "states", "queries"), wire.append, name="recorder")
    bridge = BridgeServer(bus, broker, port=0, max_frame_bytes=MAX_FRAME_BYTES, max_frames_per_second=1e9,
                          abuse_limit=1e9, send_queue_size=4 * BATCH, max_stored_bytes_per_minute=QUOTA_BYTES)
    await bridge.start()
    rng = random.Random(20261122)
    frames = [_hostile_frame(rng, i) for i in range(FRAMES)]
    codes: dict[int, int] = {}
    refused: dict[str, int] = {}
    started = time.monotonic()
    try:
        async with connect(f"ws://127.0.0.1:{bridge.port}", proxy=None, max_size=None) as ws:
            for start in range(0, FRAMES, BATCH):
                batch = frames[start:start + BATCH]
                for _, frame in batch:
                    await ws.send(frame)
                for kind, frame in batch:
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    assert reply["jsonrpc"] == "2.0", (kind, frame, reply)
                    assert set(reply) == {"jsonrpc", "id", "error"}, (kind, frame, reply)
                    code = reply["error"]["code"]
                    codes[code] = codes.get(code, 0) + 1
                    refused[kind] = refused.get(kind, 0) + 1
            # the server is still up and the same connection still works
            valid = Message.create(from_="user", message="still here")
            await ws.send(frame_of(valid))
            await wait_until(lambda: valid in wire)
    finally:
        await bridge.stop()
        await broker.aclose()
        await bus.aclose()
    assert sum(codes.values()) == FRAMES
    assert wire == [valid]  # nothing hostile was delivered
    assert bridge.stats.rejected == FRAMES
    assert {-32700, -32600, -32002, -32003, -32005, -32006} <= set(codes), codes
    sent = {kind: sum(1 for k, _ in frames if k == kind) for kind in KINDS}
    assert refused == sent  # every frame of every kind was refused
    assert min(sent.values()) >= 700
    print("\nhostile frames per kind (sent = refused): " + ", ".join(f"{k} {n}" for k, n in sent.items()))
    assert time.monotonic() - started < 60
