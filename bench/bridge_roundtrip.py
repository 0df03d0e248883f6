"""Query and message round trips through the bridge versus a bare `websockets` echo round trip, in the same run.

Query: a companion calls ``broker.send_query`` -> bus -> bridge -> WebSocket client of the reference framework
(the default dialect: it gets the bare JSON-RPC query and answers ``{"topic": "queries", "body": <result>}``; the
settings' ``client_answers = ["vision"]`` ask it before the app's own camera, which is registered too) -> bridge ->
broker -> the companion has the client's result.
Message: a page of an allowed origin (its handshake sends ``Origin: http://localhost:5173``) sends a message as the
user -> the bridge's door (the frame checks, the sender, the quota of what it may have stored) -> bus -> relayed
back to it. The quotas are set high enough never to refuse here: what is measured is what checking them costs.
Baseline: the same client sends the same query frame to a bare ``websockets`` echo server and awaits the echo.
All run on one event loop over loopback, interleaved in blocks so machine noise hits them alike.

The script runs against an older checkout too (bench/against.py): options that checkout's bridge does not know
are left out.

Run: ``.venv/bin/python bench/bridge_roundtrip.py [round_trips]``
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import time

import _report  # noqa: F401  # puts the repository on sys.path
from _report import report
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve

from app.bridge import BridgeServer
from companions.common.loop_health import percentile
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, Query, QueryResult, frame_of
from companions.wire.query_broker import QueryBroker
from tests.app.bridge_client import admitted

BLOCK = 100


class AppCamera:
    """The app's own camera: it must never be the one that answers here."""

    query_type = "vision"

    async def respond(self, query: Query) -> QueryResult:
        return QueryResult.ok(query.id, {"image": "from the app"})


async def answer_queries(ws: ClientConnection) -> None:
    """What a reference client (kyoko) does: answer every vision query it sees."""
    async for raw in ws:
        body = json.loads(raw)
        if body.get("method") == "query.send":
            result = {"jsonrpc": "2.0", "id": body["id"], "result": {"success": True, "body": {"image": "AAAA"}}}
            await ws.send(json.dumps({"topic": "queries", "body": result}))


async def echo(ws: ServerConnection) -> None:
    async for raw in ws:
        await ws.send(raw)


async def main(round_trips: int) -> None:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    broker.register(AppCamera())
    options = {"max_frames_per_second": 1e9, "client_answers": ["vision"], "max_messages_per_minute": 10**9,
               "max_stored_bytes_per_minute": 10**12}
    known = inspect.signature(BridgeServer).parameters
    bridge = BridgeServer(bus, broker, port=0, **{k: v for k, v in options.items() if k in known})
    await bridge.start()
    echo_server = await serve(echo, "127.0.0.1", 0, compression=None)
    echo_port = echo_server.sockets[0].getsockname()[1]
    bridge_times: list[float] = []
    echo_times: list[float] = []
    message_times: list[float] = []
    async with connect(f"ws://127.0.0.1:{bridge.port}", proxy=None, compression=None) as responder, \
            connect(f"ws://127.0.0.1:{echo_port}", proxy=None, compression=None) as echo_client, \
            connect(f"ws://127.0.0.1:{bridge.port}/?dialect=madoi", proxy=None, compression=None,
                    origin="http://localhost:5173") as page:  # type: ignore[arg-type]
        await admitted(bridge, 2)
        answering = asyncio.get_running_loop().create_task(answer_queries(responder))
        frame = frame_of(Query.create(from_="companion_a", type="vision"))

        async def bridge_once() -> float:
            query = Query.create(from_="companion_a", type="vision")
            started = time.perf_counter()
            result = await broker.send_query(query, timeout=5)
            elapsed = time.perf_counter() - started
            assert result.result is not None, result
            assert result.result.body == {"image": "AAAA"}, result  # the client's answer, not the app's
            return elapsed

        async def message_once() -> float:
            message = Message.create(from_="user", message="こんにちは、みんな", to=["companion_a"])
            sent = frame_of(message)
            started = time.perf_counter()
            await page.send(sent)
            while message.params.id not in await page.recv():  # its own message, relayed back from the bus
                pass
            return time.perf_counter() - started

        async def echo_once() -> float:
            started = time.perf_counter()
            await echo_client.send(frame)
            await echo_client.recv()
            return time.perf_counter() - started

        for _ in range(BLOCK):  # warm-up
            await bridge_once()
            await message_once()
            await echo_once()
        for _ in range(max(1, round_trips // BLOCK)):
            bridge_times += [await bridge_once() for _ in range(BLOCK)]
            message_times += [await message_once() for _ in range(BLOCK)]
            echo_times += [await echo_once() for _ in range(BLOCK)]
        answering.cancel()
    echo_server.close()
    await echo_server.wait_closed()
    await bridge.stop()
    await broker.aclose()
    await bus.aclose()
    for q in (50, 99):
        # Names bench/against.py can read (a word before the colon).
        report(f"bridge_query_round_trip_p{q}", percentile(bridge_times, q / 100) * 1e6, "us",
               f"websockets_echo_p{q}", percentile(echo_times, q / 100) * 1e6)
        report(f"bridge_message_round_trip_p{q}", percentile(message_times, q / 100) * 1e6, "us",
               f"websockets_echo_p{q}", percentile(echo_times, q / 100) * 1e6)
        report(f"websockets_echo_p{q}", percentile(echo_times, q / 100) * 1e6, "us")
        # The same as ratios to this run's echo: what bench/against.py compares best on a noisy machine.
        echo_q = percentile(echo_times, q / 100)
        report(f"bridge_query_over_echo_p{q}", percentile(bridge_times, q / 100) / echo_q, "x")
        report(f"bridge_message_over_echo_p{q}", percentile(message_times, q / 100) / echo_q, "x")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
