"""The model runner's process handling with a real child process that loads no model (stub_model_child.py): start,
the key, stop, a crash and its restart, a fault at start and the safer configuration, the restart bound, a child
that dies with its parent. The same with the real model: test_model_runner_real.py."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import pytest

from app.llm.runner import (
    ModelRunner,
    RestartPolicy,
    RunnerError,
    RunnerOptions,
    RunnerState,
    RunnerStatus,
    default_threads,
)
from app.llm.runner.options import safer
from tests.app.llm.processes import alive, gone
from tests.conftest import REPO
from tests.waiting import wait_until

STUB = Path(__file__).with_name("stub_model_child.py")
FAST = RestartPolicy(max_restarts=2, window_s=60, first_delay_s=0.05, max_delay_s=0.2)


def stub(*args: str) -> Callable[[], Sequence[str]]:
    return lambda: [sys.executable, str(STUB), *args]


def log_of(runner: ModelRunner) -> str:
    return runner.log_path.read_text()


@pytest.fixture
def options(tmp_path: Path) -> RunnerOptions:
    return RunnerOptions(tmp_path / "tiny.gguf", threads=2)


def make(runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path, command: Callable[[], Sequence[str]],
         **kwargs: object) -> tuple[ModelRunner, list[RunnerStatus]]:
    runner = ModelRunner(options, log_dir=tmp_path / "logs", command=command, **kwargs)  # type: ignore[arg-type]
    seen: list[RunnerStatus] = []
    runner.subscribe(seen.append)
    runners.append(runner)
    return runner, seen


def test_threads_use_both_cores_of_a_two_core_machine_and_leave_one_on_larger_ones() -> None:
    assert [default_threads(n) for n in (1, 2, 4, 6, 16, 64)] == [1, 2, 4, 5, 8, 8]


def test_the_safer_steps_switch_off_repacking_then_mmap_then_threads(options: RunnerOptions) -> None:
    steps = []
    current: RunnerOptions | None = options
    while current is not None and (step := safer(current)) is not None:
        current, answers = step
        steps.append((current.extra_buffers, current.mmap, current.threads, answers))
    assert [s[:3] for s in steps] == [(False, True, 2), (False, False, 2), (False, False, 1)]
    assert "repacked" in steps[0][3]


async def test_start_answers_with_the_key_and_stop_leaves_no_process(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, seen = make(runners, options, tmp_path, stub())
    endpoint = await runner.start()
    pid = runner.pid
    assert pid is not None
    assert endpoint.model == "tiny"
    assert endpoint.base_url.startswith("http://127.0.0.1:")
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"{endpoint.base_url}/models")).status_code == 401
        answer = await http.get(f"{endpoint.base_url}/models", headers={"Authorization": f"Bearer {endpoint.api_key}"})
        assert answer.json()["data"][0]["id"] == "tiny"
    assert await runner.start() == endpoint  # already running: the same endpoint
    await runner.stop()
    assert not alive(pid)
    assert [s.state for s in seen] == [RunnerState.STARTING, RunnerState.READY, RunnerState.STOPPED]
    assert stat.S_IMODE(runner.log_path.stat().st_mode) == 0o600  # the server logs what the companions are asked
    assert stat.S_IMODE(runner.log_path.parent.stat().st_mode) == 0o700


async def test_a_killed_child_is_restarted_and_the_state_says_so(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, seen = make(runners, options, tmp_path, stub(), policy=FAST)
    first = await runner.start()
    old_pid = runner.pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    await wait_until(lambda: runner.status.restarts == 1 and runner.status.state is RunnerState.READY, timeout=10)
    status = runner.status
    assert status.restarts == 1
    assert "SIGKILL" in status.reason
    assert "restarted" in status.reason
    assert [s.state for s in seen][-3:] == [RunnerState.CRASHED, RunnerState.RESTARTING, RunnerState.READY]
    assert runner.options == options  # a kill from outside is no reason for a safer configuration
    assert runner.pid not in (None, old_pid)
    assert status.endpoint == first  # the same address and key: the companions' clients need no new ones


async def test_a_fault_while_loading_is_answered_by_the_safer_configuration(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, seen = make(runners, options, tmp_path, stub("--segv-while", "extra_buffers"))
    await runner.start()
    assert runner.options.extra_buffers is False
    assert runner.options.mmap is True  # one step only: the first one answered it
    restarting = [s for s in seen if s.state is RunnerState.RESTARTING]
    assert len(restarting) == 1
    assert "SIGSEGV" in restarting[0].reason
    assert "repacked" in restarting[0].reason
    assert '"extra_buffers": false' in log_of(runner)


async def test_a_fault_after_ready_restarts_on_the_safer_configuration(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, seen = make(runners, options, tmp_path, stub("--segv-later", "extra_buffers"), policy=FAST)
    await runner.start()
    assert runner.options.extra_buffers is True
    await wait_until(lambda: runner.status.state is RunnerState.READY and runner.status.restarts == 1, timeout=10)
    assert runner.options.extra_buffers is False
    crashed = next(s for s in seen if s.state is RunnerState.CRASHED)
    assert "SIGSEGV" in crashed.reason
    restarting = next(s for s in seen if s.state is RunnerState.RESTARTING)
    assert restarting.reason.endswith("starting it again with weights no longer repacked for this CPU's widest "
                                      "instructions")


async def test_a_fault_that_no_configuration_answers_fails_after_the_last_step(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, seen = make(runners, options, tmp_path, stub("--segv-while", "model_file"))
    with pytest.raises(RunnerError, match="SIGSEGV"):
        await runner.start()
    assert runner.status.state is RunnerState.FAILED
    assert sum(s.state is RunnerState.RESTARTING for s in seen) == 3
    assert (runner.options.extra_buffers, runner.options.mmap, runner.options.threads) == (False, False, 1)


async def test_an_error_at_load_fails_at_once_with_the_log_s_reason(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, _ = make(runners, options, tmp_path, stub("--fail"))
    with pytest.raises(RunnerError, match="exit code 1: ValueError: Failed to load model"):
        await runner.start()
    assert runner.options == options


async def test_a_load_that_never_answers_is_bounded_and_leaves_no_process(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, _ = make(runners, options, tmp_path, stub("--silent"), startup_timeout_s=1.5)
    started = time.monotonic()
    with pytest.raises(RunnerError, match="did not answer within 2 s"):
        await runner.start()
    assert time.monotonic() - started < 5
    assert runner.pid is None
    assert runner.status.state is RunnerState.FAILED


async def test_restarts_are_bounded_within_the_window(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, seen = make(runners, options, tmp_path, stub(), policy=FAST)
    await runner.start()
    settled = (RunnerState.READY, RunnerState.FAILED)
    for crash in range(1, FAST.max_restarts + 2):
        pid = runner.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await wait_until(lambda n=crash: sum(s.state is RunnerState.CRASHED for s in seen) == n
                         and runner.status.state in settled, timeout=10)
        expected = RunnerState.READY if crash <= FAST.max_restarts else RunnerState.FAILED
        assert runner.status.state is expected
    assert "3 times within 1 minutes" in runner.status.reason
    assert runner.pid is None


PARENT = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from app.llm.runner import ModelRunner, RunnerOptions

    async def main():
        runner = ModelRunner(RunnerOptions(Path(sys.argv[1])), log_dir=Path(sys.argv[2]),
                             command=lambda: [sys.executable, sys.argv[3]])
        await runner.start()
        print(runner.pid, flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
""")


def start_parent(tmp_path: Path) -> subprocess.Popen[str]:
    """A process that runs a ModelRunner with the stub child and prints the child's pid."""
    return subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path / "m.gguf"), str(tmp_path), str(STUB)],
                            stdout=subprocess.PIPE, cwd=REPO, text=True)


async def test_the_child_dies_with_its_parent_even_by_sigkill(tmp_path: Path) -> None:
    parent = start_parent(tmp_path)
    try:
        assert parent.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(parent.stdout.readline), 30)
        child = int(line)
        assert alive(child)
    finally:
        parent.kill()
        parent.wait()
    assert await gone(child), "the child outlived its parent"


async def test_stop_while_loading_ends_the_load(
        runners: list[ModelRunner], options: RunnerOptions, tmp_path: Path) -> None:
    runner, _ = make(runners, options, tmp_path, stub("--delay", "30"))
    starting = asyncio.create_task(runner.start())
    await wait_until(lambda: runner.pid is not None)
    pid = runner.pid
    assert pid is not None
    await runner.stop()
    with pytest.raises(RunnerError, match="stopped before the model was ready"):
        await starting
    assert not alive(pid)
    assert runner.status.state is RunnerState.STOPPED
