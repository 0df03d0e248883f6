"""``madoi --headless`` running the real small model itself (``MADOI_LLM_MODEL_FILE``, no server of the user's): the
companions answer with a real line, and after SIGTERM no process is left holding the model file, also when the stop
comes while the model is still loading."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from companions.wire.protocol import Message, frame_of
from tests.app.headless import line_containing
from tests.app.llm.processes import descends_from, gone, holders_of
from tests.conftest import PYTHON, REPO, free_port, subprocess_env
from tests.realmodel.conftest import real_model

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]


@pytest.fixture
def model_file() -> Path:
    path = real_model.paths().model
    if not path.exists():
        pytest.skip(f"the real model file is not prepared ({path}); run scripts/real_model.py")
    return Path(path)


@contextlib.asynccontextmanager
async def madoi_running(home: Path, model: Path, bridge_port: int) -> AsyncIterator[asyncio.subprocess.Process]:
    env = subprocess_env(home, MADOI_LLM_MODEL_FILE=str(model), MADOI_BRIDGE_PORT=str(bridge_port),
                         PYTHONPATH=str(REPO))
    proc = await asyncio.create_subprocess_exec(PYTHON, "-m", "app.main", "--headless", cwd=REPO, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def stopped(proc: asyncio.subprocess.Process) -> tuple[float, str]:
    """SIGTERM; the seconds until it ended, and what it printed after."""
    assert proc.stdout is not None
    proc.send_signal(signal.SIGTERM)
    began = time.perf_counter()
    rest = await asyncio.wait_for(proc.stdout.read(), 15)
    await proc.wait()
    return time.perf_counter() - began, rest.decode(errors="replace")


@pytest.mark.timing
async def test_the_companions_answer_with_the_model_madoi_runs_and_sigterm_leaves_no_process(
        tmp_path: Path, model_file: Path) -> None:
    bridge_port = free_port()
    async with madoi_running(tmp_path / "home", model_file, bridge_port) as proc:
        assert proc.stdout is not None
        assert (await line_containing(proc.stdout, "madoi: ready", 60)).startswith("madoi: ready")
        found = await line_containing(proc.stdout, "madoi: language model:", 180)
        assert f"from {model_file}, run by Madoi" in found, found
        runners = holders_of(model_file, descendants_of=proc.pid)
        assert runners, "no process of madoi's holds the model file"
        async with connect(f"ws://127.0.0.1:{bridge_port}", proxy=None) as client:
            await client.send(frame_of(Message.create(from_="user", message="Hello everyone! How are you today?")))
            line = await asyncio.wait_for(_first_companion_line(client), 300)
        assert len(line.strip()) >= 2, line
        took, rest = await stopped(proc)
    assert proc.returncode == 0
    assert "madoi: stopped" in rest
    assert took < 2.0, took
    for pid in runners:
        assert await gone(pid, 2.0), f"the model runner {pid} is still running"
    assert not set(runners) & set(holders_of(model_file))  # nothing of madoi's holds the file any more


@pytest.mark.timing
async def test_sigterm_while_the_model_loads_ends_madoi_at_once_and_the_runner_with_it(
        tmp_path: Path, model_file: Path) -> None:
    async with madoi_running(tmp_path / "home", model_file, free_port()) as proc:
        assert proc.stdout is not None
        await line_containing(proc.stdout, "madoi: model starting", 60)
        runner_log = tmp_path / "home" / "model-runner.log"
        await asyncio.sleep(0.3)  # the child is importing llama.cpp or mapping the model now
        children = [p for p in _runner_processes() if descends_from(p, proc.pid)]
        assert children, "the runner's child had not started"
        took, rest = await stopped(proc)
    assert proc.returncode == 0
    assert "madoi: stopped" in rest
    assert "madoi: language model" not in rest  # stopped before the model was ready
    assert took < 1.0, took
    for pid in children:
        assert await gone(pid, 2.0), f"the model runner {pid} is still running"
    assert runner_log.exists()


async def _first_companion_line(client: object) -> str:
    async for raw in client:  # type: ignore[attr-defined]
        data = json.loads(raw)
        body = data.get("body", data) if isinstance(data, dict) else data
        if isinstance(body, dict) and body.get("method") == "message.send":
            message = Message.model_validate(body)
            if message.params.from_ != "user" and message.params.message.strip():
                return message.params.message
    raise AssertionError("the bridge closed before a companion spoke")


def _runner_processes() -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if b"app.llm.runner.child" in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
    return found
