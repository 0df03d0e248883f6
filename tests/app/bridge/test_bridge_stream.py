"""Streamed lines over the bridge: ``message.stream`` notifications to clients that ask for them, and only them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from app.bridge import BridgeServer
from companions.companion.worker import RunContext, Worker
from companions.llm.scripted import ScriptedModel, call, say, stall
from companions.llm.types import ChatMessage
from companions.tools.functions import ToolRegistry, tool
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, parse_frame
from tests.app.bridge_app import serving_bridge
from tests.app.bridge_client import admitted, client, hello, recv

LINE = 'こんばんは、"みなさん"！ Shall we talk about the stars?'


@pytest.fixture
async def bridge() -> AsyncIterator[tuple[InProcessBus, BridgeServer]]:
    async with serving_bridge() as serving:
        yield serving


def speaking_worker(bus: InProcessBus, *steps: Any) -> tuple[Worker, ScriptedModel]:
    @tool
    def speak(message: str, emotion: str = "neutral") -> str:
        """Say something."""
        return "said"

    model = ScriptedModel("m", *steps)
    return Worker(model, ToolRegistry([speak]), bus=bus, owner="akari"), model


async def stream_frames(ws: ClientConnection, until_done: int = 1) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while sum(f["params"]["done"] for f in frames) < until_done:
        frame = await recv(ws)
        assert frame["topic"] == "stream", frame
        frames.append(frame["body"])
    return frames


async def test_a_client_that_asks_follows_the_line_as_it_is_written(
        bridge: tuple[InProcessBus, BridgeServer]) -> None:
    bus, server = bridge
    async with client(server) as follower, client(server) as plain:
        welcome = await hello(follower, stream=True)
        assert welcome["body"]["stream"] is True
        await admitted(server, 2)
        worker, model = speaking_worker(bus, call("speak", {"emotion": "happy", "message": LINE}), say(""))
        await worker.run([ChatMessage.user("hi")], ctx=RunContext(turn_id="turn-1"))
        frames = await stream_frames(follower)
        assert all(f == {"jsonrpc": "2.0", "method": "message.stream", "params": f["params"]} for f in frames)
        pieces = [f["params"] for f in frames]
        assert len(pieces) > 3  # piece by piece, as the speak call's arguments streamed
        assert "".join(p["delta"] for p in pieces) == LINE
        assert {(p["id"], p["from"], p["kind"]) for p in pieces} == {("turn-1", "akari", "speech")}
        assert [p["done"] for p in pieces][-1] is True
        assert pieces[-1]["delta"] == ""

        # The line as said follows as a message.send; a client that did not ask never saw any stream frame.
        said = Message.create(from_="akari", message=LINE, emotion="happy")
        bus.publish(said)
        assert parse_frame(json.dumps(await recv(follower))) == ("messages", said)
        assert parse_frame(json.dumps(await recv(plain))) == ("messages", said)
        model.assert_used_up()


async def test_a_line_cut_off_by_the_user_ends_with_dropped(bridge: tuple[InProcessBus, BridgeServer]) -> None:
    bus, server = bridge
    async with client(server) as follower:
        await hello(follower, stream=True)
        worker, _ = speaking_worker(bus, stall(text_first="えーと、"))
        turn = asyncio.create_task(worker.run([ChatMessage.user("hi")], ctx=RunContext(turn_id="turn-2")))
        first = (await recv(follower))["body"]["params"]
        assert (first["delta"], first["kind"], first["done"]) == ("えーと、", "text", False)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        last = (await recv(follower))["body"]["params"]
        assert last == {"id": "turn-2", "from": "akari", "delta": "", "done": True, "kind": "text", "dropped": True}


async def test_an_unknown_hello_field_is_still_refused(bridge: tuple[InProcessBus, BridgeServer]) -> None:
    _, server = bridge
    async with client(server) as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"stream": "yes please"}}))
        frame = await recv(ws)
        assert frame["error"]["code"] < 0
