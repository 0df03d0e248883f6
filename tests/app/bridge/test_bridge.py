"""The WebSocket bridge with a real `websockets` client over loopback, the real bus and the real query broker."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.bridge import BridgeConfigError, BridgeServer, build_bridge
from app.settings.model import Settings
from companions.wire.bus import InProcessBus, LocalEvent
from companions.wire.protocol import Action, Message, Query, QueryResult, State, WireItem, frame_of, parse_frame
from companions.wire.query_broker import QueryBroker
from tests.app.bridge_client import admitted, client, hello, recv
from tests.waiting import wait_until

MakeBridge = Callable[..., Awaitable[BridgeServer]]


class Ping(LocalEvent):
    pass


@pytest.fixture
async def make_bridge(bus: InProcessBus, broker: QueryBroker) -> AsyncIterator[MakeBridge]:
    started: list[BridgeServer] = []

    async def make(**kwargs: Any) -> BridgeServer:
        kwargs.setdefault("port", 0)  # an ephemeral port
        bridge = BridgeServer(bus, broker, **kwargs)
        await bridge.start()
        started.append(bridge)
        return bridge

    yield make
    for bridge in started:
        await bridge.stop()


@pytest.fixture
async def wire(bus: InProcessBus) -> list[WireItem]:
    """Everything that reaches the bus's wire topics."""
    got: list[WireItem] = []
    bus.subscribe(("messages", "actions", "states", "queries"), got.append, name="recorder")
    return got


def error_code(frame: dict[str, Any]) -> int:
    assert frame["jsonrpc"] == "2.0", frame
    assert "error" in frame, frame
    code: int = frame["error"]["code"]
    return code


async def test_clients_receive_messages_actions_states_and_queries(bus: InProcessBus,
                                                                   make_bridge: MakeBridge) -> None:
    bridge = await make_bridge()
    async with client(bridge) as ws:
        await admitted(bridge, 1)
        items: list[WireItem] = [
            Message.create(from_="companion_a", message="こんにちは", to=["user"], emotion="happy"),
            Action.create(from_="companion_a", name="gesture", params={"type": "wave"}),
            State.create(from_="companion_a", message_id="m1", state="speak", importance=7),
            Query.create(from_="companion_a", type="vision"),
        ]
        bus.publish(Ping())  # local events never leave the process
        bus.publish(QueryResult.ok("someone-elses-query", {}))  # nor results of queries this client did not send
        for item in items:
            bus.publish(item)
        received = [parse_frame(await asyncio.wait_for(ws.recv(), 5)) for _ in items]
        assert [item for _, item in received] == items
        assert [topic for topic, _ in received] == ["messages", "actions", "states", "queries"]


async def test_a_user_message_from_a_client_reaches_the_bus(bus: InProcessBus, make_bridge: MakeBridge,
                                                            wire: list[WireItem]) -> None:
    bridge = await make_bridge(user_name="yuki")
    message = Message.create(from_="yuki", message="hello companions", to=["companion_a"])
    async with client(bridge) as ws:
        await ws.send(frame_of(message))
        await wait_until(lambda: message in wire)
        echoed = parse_frame(await asyncio.wait_for(ws.recv(), 5))  # the bus relays it to clients too
        assert echoed == ("messages", message)


async def test_a_client_answers_vision_and_speak_queries_for_a_companion(broker: QueryBroker,
                                                                         make_bridge: MakeBridge) -> None:
    bridge = await make_bridge()
    image = base64.b64encode(b"\xff\xd8 fake jpeg").decode()
    async with client(bridge) as ws:
        welcome = await hello(ws, answers=["vision", "speak"], companions=["companion_a"])
        assert welcome["body"]["answers"] == ["vision", "speak"]

        async def answer() -> None:
            for _ in range(2):
                frame = await recv(ws)
                query = Query.model_validate(frame["body"])
                body = {"image": image} if query.params.type == "vision" else {"duration_s": 1.5}
                await ws.send(frame_of(QueryResult.ok(query.id, body)))

        answering = asyncio.ensure_future(answer())
        vision = await broker.send_query(Query.create(from_="companion_a", type="vision"), timeout=5)
        speak = await broker.send_query(
            Query.create(from_="companion_a", type="speak", body={"message": "やあ", "emotion": "happy"}), timeout=5)
        await answering
    assert vision.result is not None
    assert vision.result.body == {"image": image}
    assert speak.result is not None
    assert speak.result.body == {"duration_s": 1.5}


async def test_a_client_may_not_answer_types_it_did_not_announce_nor_twice(broker: QueryBroker,
                                                                           make_bridge: MakeBridge) -> None:
    bridge = await make_bridge()
    async with client(bridge) as responder, client(bridge) as intruder:
        await hello(responder, answers=["vision"], companions=["companion_a"])
        await admitted(bridge, 2)
        query = Query.create(from_="companion_a", type="vision")
        pending = asyncio.ensure_future(broker.send_query(query, timeout=5))
        await recv(intruder)  # both see the query
        await recv(responder)
        await intruder.send(frame_of(QueryResult.ok(query.id, {"image": "forged"})))
        rejected = await recv(intruder)
        assert error_code(rejected) == -32002
        assert rejected["id"] == query.id
        await responder.send(frame_of(QueryResult.ok(query.id, {"image": "real"})))
        result = await pending
        assert result.result is not None
        assert result.result.body == {"image": "real"}
        await responder.send(frame_of(QueryResult.ok(query.id, {"image": "again"})))
        assert error_code(await recv(responder)) == -32005


async def test_a_disconnecting_responder_fails_its_pending_query_at_once(broker: QueryBroker,
                                                                         make_bridge: MakeBridge) -> None:
    bridge = await make_bridge()
    async with client(bridge) as ws:
        await hello(ws, answers=["vision"], companions=["c"])
        pending = asyncio.ensure_future(broker.send_query(Query.create(from_="c", type="vision"), timeout=30))
        await recv(ws)
    result = await asyncio.wait_for(pending, 5)
    assert result.error == "the responder for query type 'vision' disconnected"


async def test_a_hello_that_answers_for_no_companion_is_refused(broker: QueryBroker,
                                                                make_bridge: MakeBridge) -> None:
    bridge = await make_bridge()
    async with client(bridge) as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"answers": ["speak"]}}))
        refused = await recv(ws)
        assert error_code(refused) == -32600
        assert "companions it names" in refused["error"]["message"]
        assert broker.externals() == {}  # it is not asked first for anyone's speak queries
        speak = await broker.send_query(Query.create(from_="companion_a", type="speak"), timeout=5)
    assert speak.error == "unsupported query type: speak"  # nobody answers here: no client was asked


async def test_a_clients_queries_are_refused_and_never_reach_the_apps_responders(
        bus: InProcessBus, broker: QueryBroker, make_bridge: MakeBridge, wire: list[WireItem]) -> None:
    class Clock:
        query_type = "time"

        def __init__(self) -> None:
            self.asked: list[Query] = []

        async def respond(self, query: Query) -> QueryResult:
            self.asked.append(query)
            return QueryResult.ok(query.id, {"now": "12:00"})

    clock = Clock()
    broker.register(clock)
    bridge = await make_bridge(reserved_ids=lambda: {"companion_a"})
    async with client(bridge) as ws:
        await hello(ws, id="robot_1")
        for sender in ("robot_1", "user", "user_evil", "companion_a"):
            query = Query.create(from_=sender, type="time")
            await ws.send(frame_of(query))
            refused = await recv(ws)
            assert error_code(refused) == -32002, sender
            assert refused["id"] == query.id
            assert "clients may not send queries" in refused["error"]["message"]
        await ws.send(frame_of(Query.create(from_="robot_1", type="smell")))  # an unknown type, the same
        assert error_code(await recv(ws)) == -32002
        await bus.drain()
    assert not [item for item in wire if isinstance(item, Query)]
    assert clock.asked == []
    assert broker.stats.observed == 0


async def test_forged_from_is_rejected_and_the_connection_survives(bus: InProcessBus, make_bridge: MakeBridge,
                                                                   wire: list[WireItem]) -> None:
    bridge = await make_bridge(reserved_ids=lambda: {"companion_a"})
    async with client(bridge) as ws:
        await hello(ws, id="robot_1")
        forged = Message.create(from_="companion_a", message="I am not who I say")
        await ws.send(frame_of(forged))
        rejected = await recv(ws)
        assert error_code(rejected) == -32002
        assert "forged from 'companion_a'" in rejected["error"]["message"]
        await ws.send(frame_of(Action.create(from_="robot_1", name="wave")))
        assert error_code(await recv(ws)) == -32002
        own = Message.create(from_="robot_1", message="as myself")
        await ws.send(frame_of(own))
        await wait_until(lambda: own in wire)
        assert forged not in wire


async def test_a_reserved_identity_cannot_be_claimed(make_bridge: MakeBridge) -> None:
    bridge = await make_bridge(reserved_ids=lambda: {"companion_a"})
    async with client(bridge) as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"id": "companion_a"}}))
        assert error_code(await recv(ws)) == -32002


async def test_a_client_cannot_take_the_name_of_a_person_on_another_machine(bus: InProcessBus,
                                                                           make_bridge: MakeBridge,
                                                                           wire: list[WireItem]) -> None:
    # "<name>@<peer id>" is how the network names a person elsewhere: the window and the trust policy would take the
    # client for that person.
    elsewhere = "user_x@16Uiu2HAmExamplePeer"
    bridge = await make_bridge()
    async with client(bridge) as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"id": elsewhere}}))
        assert error_code(await recv(ws)) == -32600
    async with client(bridge) as ws:
        forged = Message.create(from_=elsewhere, message="it is me, from my machine")
        await ws.send(frame_of(forged))
        assert error_code(await recv(ws)) == -32002
        own = Message.create(from_="user_x", message="as myself")
        await ws.send(frame_of(own))
        await wait_until(lambda: own in wire)
        assert forged not in wire


async def test_oversize_frames_get_an_error_and_the_connection_survives(bus: InProcessBus,
                                                                        make_bridge: MakeBridge,
                                                                        wire: list[WireItem]) -> None:
    bridge = await make_bridge(max_frame_bytes=1024)
    async with client(bridge) as ws:
        big = Message.create(from_="user", message="x" * 2000)
        await ws.send(frame_of(big))
        assert error_code(await recv(ws)) == -32003
        small = Message.create(from_="user", message="fits")
        await ws.send(frame_of(small))
        await wait_until(lambda: small in wire)
        assert big not in wire


async def test_oversize_is_counted_in_utf8_bytes_not_characters(bus: InProcessBus, make_bridge: MakeBridge,
                                                                wire: list[WireItem]) -> None:
    bridge = await make_bridge(max_frame_bytes=1024)
    async with client(bridge) as ws:
        wide = Message.create(from_="user", message="あ" * 320)  # < 1024 characters, > 1024 bytes
        assert len(frame_of(wide)) < 1024 < len(frame_of(wide).encode())
        await ws.send(frame_of(wide))
        assert error_code(await recv(ws)) == -32003
        fits = Message.create(from_="user", message="あ" * 200)
        await ws.send(frame_of(fits))
        await wait_until(lambda: fits in wire)
        assert wide not in wire


async def test_relayed_frames_are_text_frames_in_publish_order_whatever_their_size(
        bus: InProcessBus, make_bridge: MakeBridge) -> None:
    bridge = await make_bridge()
    async with client(bridge) as ws:
        await admitted(bridge, 1)
        sizes = [10, 40_000, 10, 10, 100_000, 10]  # written at once, or through the send queue past 16 KiB
        items = [Message.create(from_="companion_a", message="z" * n, id=f"m{i}") for i, n in enumerate(sizes)]
        for item in items:
            bus.publish(item)
        for item in items:
            raw = await asyncio.wait_for(ws.recv(), 5)
            assert isinstance(raw, str)  # a text frame, as the reference bridge sends
            assert parse_frame(raw) == ("messages", item)
        assert bridge.client_sessions()[0].dropped == 0


async def test_a_flood_is_rate_limited_and_the_connection_survives(bus: InProcessBus, make_bridge: MakeBridge,
                                                                   wire: list[WireItem]) -> None:
    bridge = await make_bridge(max_frames_per_second=10)
    async with client(bridge) as ws:
        for i in range(30):
            await ws.send(frame_of(Message.create(from_="user", message=f"flood {i}")))
        errors = 0
        for _ in range(30):  # each frame comes back: as an error, or relayed from the bus as a message
            frame = await recv(ws)
            if "error" in frame:
                assert error_code(frame) == -32004
                errors += 1
        await bus.drain()
        delivered = [m for m in wire if isinstance(m, Message)]
        assert errors + len(delivered) == 30
        assert errors >= 15
        await ws.ping()  # still open


async def test_a_client_that_keeps_abusing_is_closed_with_policy_violation(make_bridge: MakeBridge) -> None:
    bridge = await make_bridge(abuse_limit=5, abuse_forgiven_per_s=0.1)
    async with client(bridge) as ws:
        async def keep_abusing() -> None:
            for _ in range(50):
                await ws.send("not json")
                await recv(ws)

        with pytest.raises(ConnectionClosed) as closed:
            await keep_abusing()
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1008
        assert closed.value.rcvd.reason == "too many rejected frames"


async def test_token_is_required_to_listen_beyond_loopback(bus: InProcessBus, broker: QueryBroker) -> None:
    with pytest.raises(BridgeConfigError, match=r"refuses to listen on '0\.0\.0\.0' without a token"):
        BridgeServer(bus, broker, host="0.0.0.0", port=0)
    settings = Settings.model_validate({"bridge": {"host": "192.168.1.5", "port": 8080}})
    with pytest.raises(BridgeConfigError):
        build_bridge(bus, broker, settings)
    assert BridgeServer(bus, broker, host="0.0.0.0", port=0, token="s3cret").host == "0.0.0.0"
    assert build_bridge(bus, broker, Settings.model_validate({"bridge": {"port": 0}})) is None  # 0 = off


async def test_token_in_header_or_first_frame(bus: InProcessBus, make_bridge: MakeBridge,
                                              wire: list[WireItem]) -> None:
    bridge = await make_bridge(token="s3cret")
    with pytest.raises(InvalidStatus) as refused:
        async with client(bridge, additional_headers={"Authorization": "Bearer wrong"}):
            pass
    assert refused.value.response.status_code == 401

    async with client(bridge, additional_headers={"Authorization": "Bearer s3cret"}) as ws:
        await admitted(bridge, 1)
        first = Message.create(from_="user", message="with a header")
        await ws.send(frame_of(first))
        await wait_until(lambda: first in wire)

    async with client(bridge) as ws:
        await hello(ws, token="s3cret")
        second = Message.create(from_="user", message="with a hello")
        await ws.send(frame_of(second))
        await wait_until(lambda: second in wire)

    async with client(bridge) as ws:
        unauthenticated = Message.create(from_="user", message="no token")
        await ws.send(frame_of(unauthenticated))
        assert error_code(await recv(ws)) == -32001
        with pytest.raises(ConnectionClosed) as closed:
            await recv(ws)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1008
    assert unauthenticated not in wire


async def _raw_connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket handshake by hand, from a peer that then never reads nor answers pings."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=1024)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    status = await reader.readuntil(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 101"), status
    return reader, writer


async def test_a_slow_client_does_not_stall_the_bus_or_other_clients(bus: InProcessBus,
                                                                     make_bridge: MakeBridge) -> None:
    bridge = await make_bridge(send_queue_size=64)
    _, slow_writer = await _raw_connect(bridge.port)
    async with client(bridge) as fast:
        await admitted(bridge, 2)
        text = "y" * 4000
        for batch in range(60):  # batches smaller than the send queue: a client that keeps up loses nothing
            for i in range(50):
                bus.publish(Message.create(from_="companion_a", message=text, id=f"{batch}-{i}"))
            for i in range(50):
                _, item = parse_frame(await asyncio.wait_for(fast.recv(), 5))
                assert isinstance(item, Message)
                assert item.params.id == f"{batch}-{i}"  # nothing lost for the client that keeps up
        slow, quick = sorted(bridge.client_sessions(), key=lambda c: c.dropped, reverse=True)
        assert slow.dropped > 0
        assert slow.queued <= 64
        assert quick.dropped == 0
    slow_writer.close()
    with contextlib.suppress(OSError):
        await slow_writer.wait_closed()


async def test_heartbeats_close_a_dead_peer(make_bridge: MakeBridge) -> None:
    bridge = await make_bridge(ping_interval=0.1, ping_timeout=0.2, close_timeout=0.2)
    _, writer = await _raw_connect(bridge.port)
    await admitted(bridge, 1)
    await admitted(bridge, 0, timeout=5)  # it never answered a ping
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def test_a_client_that_never_authenticates_is_closed(make_bridge: MakeBridge) -> None:
    bridge = await make_bridge(token="s3cret", auth_timeout=0.2)
    async with client(bridge) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await recv(ws)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "authentication timeout")
    assert not bridge.client_sessions()


async def test_a_taken_port_is_a_clear_error_not_a_crash(bus: InProcessBus, make_bridge: MakeBridge) -> None:
    first = await make_bridge()
    second = await make_bridge(port=first.port)
    assert not second.running
    assert second.error is not None
    assert f"cannot listen on 127.0.0.1:{first.port}" in second.error
    assert first.running


async def test_an_item_from_elsewhere_that_cannot_be_written_out_is_skipped_without_a_traceback(
        bus: InProcessBus, make_bridge: MakeBridge, caplog: pytest.LogCaptureFixture) -> None:
    bridge = await make_bridge()
    unwritable = Message.model_validate({"params": {"id": "m1", "from": "companion_a", "to": [], "message": "hi",
                                                    "metadata": {"note": "\ud800"}}})  # e.g. from a network peer
    async with client(bridge) as madoi, client(bridge, dialect="legacy") as legacy, client(bridge, None) as firehose:
        await admitted(bridge, 3)
        for _ in range(3):
            bus.publish(unwritable)
        fine = Message.create(from_="companion_a", message="next")
        bus.publish(fine)
        for ws in (madoi, legacy, firehose):
            assert "next" in str(await asyncio.wait_for(ws.recv(), 5))  # the first frame each gets
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= 40]
    warnings = [r.getMessage() for r in caplog.records if "cannot be written out" in r.getMessage()]
    assert 1 <= len(warnings) <= 2  # once per kind of failure (the two serializers), not on each of the 9 relays


async def test_connections_are_bounded_in_all(make_bridge: MakeBridge) -> None:
    bridge = await make_bridge(max_connections=2, max_connections_per_address=8)
    async with client(bridge), client(bridge):
        await admitted(bridge, 2)
        with pytest.raises(InvalidStatus) as refused:
            async with client(bridge):
                pass
        assert refused.value.response.status_code == 503
        assert bridge.stats.refused_connections == 1
    await admitted(bridge, 0)
    async with client(bridge):  # room again
        await admitted(bridge, 1)
