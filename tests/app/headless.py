"""Madoi as a user runs it without a window: ``madoi demo`` (the scripted model server) and ``madoi`` headless, as
child processes, with a bridge client following what the companions say."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

from companions.wire.protocol import Message, frame_of
from tests.conftest import PYTHON, REPO, free_port, subprocess_env

MADOI = str(Path(PYTHON).parent / "madoi")  # the console script, as the README runs it


@contextlib.asynccontextmanager
async def demo_server(*args: str) -> AsyncIterator[str]:
    """The README's demo command as a child process; yields its base URL once it printed its ready line."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        PYTHON, "-m", "companions.testing.openai_server", "--demo", "--port", str(port), *args,
        cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        ready = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert f"http://127.0.0.1:{port}/v1" in ready, ready + (await proc.stderr.read()).decode()  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc.returncode is None:
            proc.terminate()
        _, err = await asyncio.wait_for(proc.communicate(), 10)
        assert b"Traceback" not in err, err.decode(errors="replace")


@dataclass
class HeadlessMadoi:
    """``madoi --headless`` as a child process, watched through its bridge as an external client would."""

    proc: asyncio.subprocess.Process
    client: ClientConnection
    lines: list[tuple[float, Message]] = field(default_factory=list)  # (loop time, companion message)
    stderr: list[str] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def say(self, text: str, to: list[str] | None = None) -> float:
        """Sends ``text`` as the user; returns the loop time it was sent."""
        await self.client.send(frame_of(Message.create(from_="user", message=text, to=to or [])))
        return asyncio.get_running_loop().time()

    async def wait_for(self, found: Callable[[list[Message]], bool], timeout: float) -> list[Message]:
        """Waits until ``found`` holds for the companion lines so far; returns them."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while not found([m for _, m in self.lines]):
                    self._arrived.clear()
                    await self._arrived.wait()
        return [m for _, m in self.lines]

    async def _read(self) -> None:
        async for raw in self.client:
            data = json.loads(raw)
            body = data.get("body", data) if isinstance(data, dict) else data
            if isinstance(body, dict) and body.get("method") == "message.send":
                message = Message.model_validate(body)
                if message.params.from_ != "user":
                    self.lines.append((asyncio.get_running_loop().time(), message))
                    self._arrived.set()

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.stderr.append(line.decode(errors="replace"))


@contextlib.asynccontextmanager
async def headless_madoi(base_url: str, home: Path, **env: str) -> AsyncIterator[HeadlessMadoi]:
    """``MADOI_HOME=<home> MADOI_LLM_BASE_URL=<base_url> madoi --headless`` with the bridge on a free port."""
    bridge_port = free_port()
    environment = subprocess_env(home, MADOI_LLM_BASE_URL=base_url, MADOI_BRIDGE_PORT=str(bridge_port), **env)
    proc = await asyncio.create_subprocess_exec(MADOI, "--headless", cwd=REPO, env=environment,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    try:
        ready = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        if not ready.startswith("madoi: ready"):
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 30)
            raise AssertionError(f"madoi did not start: {ready!r}\n{err.decode(errors='replace')[-3000:]}")
        async with connect(f"ws://127.0.0.1:{bridge_port}", proxy=None) as client, asyncio.TaskGroup() as tasks:
            madoi = HeadlessMadoi(proc, client)
            reader = tasks.create_task(madoi._read())
            drain = tasks.create_task(madoi._drain_stderr())
            try:
                yield madoi
            finally:
                reader.cancel()
                drain.cancel()
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.communicate(), 30)


async def line_containing(stream: asyncio.StreamReader, text: str, timeout: float) -> str:
    """The first line the child process writes to ``stream`` that holds ``text``."""
    async with asyncio.timeout(timeout):
        while line := (await stream.readline()).decode(errors="replace"):
            if text in line:
                return line
    raise AssertionError(f"the process ended without printing {text!r}")
