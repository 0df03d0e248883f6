"""A WebSocket client of the bridge over loopback (the real ``websockets`` client): connect, receive a frame, greet;
and waiting until the bridge has admitted its clients."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from app.bridge import BridgeServer
from tests.waiting import wait_until


def client(bridge: BridgeServer, dialect: str | None = "madoi", **kwargs: Any) -> connect:
    """A client of Madoi's own dialect (``{topic, body}`` frames, states too), unless ``dialect`` says otherwise
    (``None``: the bridge's default, the reference firehose's bare JSON-RPC bodies; see test_bridge_dialects)."""
    kwargs.setdefault("proxy", None)
    query = f"/?dialect={dialect}" if dialect else ""
    return connect(f"ws://127.0.0.1:{bridge.port}{query}", **kwargs)


async def recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    raw = await asyncio.wait_for(ws.recv(), timeout)
    data: dict[str, Any] = json.loads(raw)
    return data


async def hello(ws: ClientConnection, **body: Any) -> dict[str, Any]:
    await ws.send(json.dumps({"topic": "hello", "body": body}))
    welcome = await recv(ws)
    assert welcome["topic"] == "hello", welcome
    return welcome


async def admitted(bridge: BridgeServer, count: int, timeout: float = 5.0) -> None:
    """Waits until exactly ``count`` clients are admitted: authenticated, they receive the bus's traffic."""
    await wait_until(lambda: len(bridge.client_sessions()) == count, f"{count} clients admitted by the bridge",
                     timeout=timeout)
