"""A bridge moved while the app runs (the user saved another port) reserves what the first one did: no client may take
one of this app's companions' ids or ``noticed`` (the sender of what the app noticed, companions/trust/policy.py
NOTICED) as its identity. The real app, its real bridge on loopback, a real ``websockets`` client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.trust.policy import NOTICED
from tests.conftest import free_port


async def _hello_as(port: int, identity: str) -> dict[str, Any]:
    """What the bridge answers a client's hello that declares ``identity``: the welcome, or the error."""
    async with connect(f"ws://127.0.0.1:{port}/?dialect=madoi", proxy=None) as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"id": identity}}))
        answer: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
        return answer


@pytest.mark.parametrize("identity", [NOTICED.id, "akari"])
async def test_a_moved_bridge_still_keeps_noticed_and_the_companions_ids_from_clients(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, identity: str) -> None:
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        bridge = runtime.parts.bridge
        assert bridge is not None
        first = bridge.port
        assert "not available" in (await _hello_as(first, identity))["error"]["message"]
        settings = runtime.settings.model_copy(deep=True)
        settings.bridge.port = free_port()
        await runtime.apply_settings(settings)
        moved = runtime.parts.bridge
        assert moved is not None
        assert moved.port == settings.bridge.port != first
        assert "not available" in (await _hello_as(moved.port, identity))["error"]["message"]
    finally:
        await runtime.stop()
