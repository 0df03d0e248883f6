"""Helpers for the network tests: the reference's own libp2p stack as a subprocess (tests/interop_node/node.mjs on
Node 24, prepared by scripts/interop_node.py), driven over its stdin/stdout."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import REPO


def interop_toolchain() -> Any:
    """The prepared node and script; skipped on a developer's machine without npm, never under CI."""
    spec = importlib.util.spec_from_file_location("interop_node", REPO / "scripts" / "interop_node.py")
    assert spec is not None
    assert spec.loader is not None
    module = sys.modules.get("interop_node") or importlib.util.module_from_spec(spec)
    sys.modules["interop_node"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    try:
        return module.prepare()
    except module.ToolchainMissing as err:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the reference's node toolchain is not available: {err}")


class ReferenceNode:
    """One peer of the reference's stack; ``events`` keeps everything it printed."""

    def __init__(self, proc: asyncio.subprocess.Process, ready: dict[str, Any]) -> None:
        self.proc = proc
        self.peer_id: str = ready["peerId"]
        self.address: str = ready["addrs"][0]
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, metadata: dict[str, str]) -> ReferenceNode:
        toolchain = interop_toolchain()
        proc = await asyncio.create_subprocess_exec(
            str(toolchain.node), str(toolchain.script), json.dumps(metadata), cwd=toolchain.script.parent,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        ready = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        assert ready["event"] == "ready", ready
        return cls(proc, ready)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.events.append(json.loads(line))
            self._changed.set()

    async def send(self, **command: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + "\n").encode())
        await self.proc.stdin.drain()

    async def wait_for(self, match: Callable[[dict[str, Any]], bool], timeout: float = 20.0, *,
                       since: int = 0) -> dict[str, Any]:
        """The first event from index ``since`` on that ``match`` accepts."""
        async with asyncio.timeout(timeout):
            while True:
                for event in self.events[since:]:
                    if match(event):
                        return event
                self._changed.clear()
                await self._changed.wait()

    async def subscribed(self, peer: str, topic: str = "messages", timeout: float = 20.0) -> None:
        """Waits until this node has seen ``peer`` subscribe to ``topic`` (gossipsub's exchange after connecting)."""
        async with asyncio.timeout(timeout):
            while True:
                asked = len(self.events)
                await self.send(cmd="peers", topic=topic)
                answer = await self.wait_for(lambda e: e["event"] == "peers", since=asked)
                if peer in answer["peers"]:
                    return
                await asyncio.sleep(0.05)

    async def stop(self) -> None:
        if self.proc.returncode is None:
            try:
                await self.send(cmd="stop")
                await asyncio.wait_for(self.proc.wait(), 10)
            except (TimeoutError, ConnectionError):
                self.proc.kill()
                await self.proc.wait()
        self._reader.cancel()
