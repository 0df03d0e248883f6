"""Starting and stopping never wait on a model server: ``madoi --headless`` says it is ready while an unreachable
server is still being asked, and a SIGTERM at any moment of the start-up ends it within a second, cleanly."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.llm.gguf import write_gguf
from tests.app.llm.processes import holders_of
from tests.conftest import PYTHON, REPO, free_port, subprocess_env

pytestmark = pytest.mark.timing  # SIGTERM and ready within a second: with nothing beside them (./test)

STOP_BOUND_S = 1.0
PROBE_TIMEOUT_S = 5.0  # how long a configured endpoint without a model name is asked (companions/llm/detect.py)


@contextlib.contextmanager
def blackholed_server() -> Iterator[str]:
    """A base URL whose port accepts connections (the kernel's backlog) and never answers a byte."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def start_madoi(home: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([PYTHON, "-m", "app.main", "--headless"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO, env=subprocess_env(home, PYTHONPATH=str(REPO),
                                                                    MADOI_BRIDGE_PORT=str(free_port()), **env))


def stop_within_bound(proc: subprocess.Popen[str]) -> tuple[float, str, str]:
    """SIGTERM; the seconds until the process ended, and its output."""
    proc.send_signal(signal.SIGTERM)
    began = time.perf_counter()
    try:
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    return time.perf_counter() - began, out, err


def assert_stopped_cleanly(took: float, proc: subprocess.Popen[str], out: str, err: str) -> None:
    assert proc.returncode == 0, (proc.returncode, err[-3000:])
    assert "madoi: stopped" in out, out
    assert "Traceback" not in err, err[-3000:]
    assert took < STOP_BOUND_S, f"SIGTERM took {took:.2f} s to end madoi\n{err[-3000:]}"


def test_ready_comes_while_an_unreachable_server_is_asked_and_sigterm_then_ends_at_once(tmp_path: Path) -> None:
    with blackholed_server() as base_url:
        launched = time.perf_counter()
        proc = start_madoi(tmp_path, MADOI_LLM_BASE_URL=base_url)
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        ready_after = time.perf_counter() - launched
        assert ready.startswith("madoi: ready"), ready + (proc.stderr.read() if proc.stderr else "")
        time.sleep(0.5)  # the server is being asked now (it never answers: the ask ends after PROBE_TIMEOUT_S)
        took, out, err = stop_within_bound(proc)
    assert "madoi: language model" not in out, out  # the ask was still under way: ready did not wait for it
    assert_stopped_cleanly(took, proc, out, err)
    print(f"ready after {ready_after:.2f} s; SIGTERM while probing ended madoi in {took:.2f} s")


def test_the_companions_hear_of_the_unreachable_server_after_ready(tmp_path: Path) -> None:
    with blackholed_server() as base_url:
        proc = start_madoi(tmp_path, MADOI_LLM_BASE_URL=base_url)
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("madoi: ready")
        ready_at = time.perf_counter()
        said = proc.stdout.readline()
        found_after = time.perf_counter() - ready_at
        took, out, err = stop_within_bound(proc)
    assert said.startswith("madoi: language model: The configured LLM cannot be used: cannot reach"), said
    assert found_after > PROBE_TIMEOUT_S - 1.5, found_after  # it was found out after ready, not before
    assert_stopped_cleanly(took, proc, out, err)


@pytest.mark.parametrize("after_s", [0.6, 1.2, 2.0])
def test_sigterm_at_any_moment_of_the_start_ends_madoi_within_a_second(tmp_path: Path, after_s: float) -> None:
    """From the imports to the parts starting (the ready line may or may not have come)."""
    with blackholed_server() as base_url:
        proc = start_madoi(tmp_path, MADOI_LLM_BASE_URL=base_url)
        time.sleep(after_s)
        took, out, err = stop_within_bound(proc)
    assert_stopped_cleanly(took, proc, out, err)
    assert "madoi: language model" not in out


def test_sigterm_while_a_model_file_loads_leaves_no_process(tmp_path: Path) -> None:
    """A file that is no model: the runner's child starts, the stop comes first or its refusal does; either way
    madoi ends at once and no runner process is left."""
    model = write_gguf(tmp_path / "not-a-model.gguf", size=4096)  # the header only: llama.cpp refuses it
    proc = start_madoi(tmp_path / "home", MADOI_LLM_MODEL_FILE=str(model))
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("madoi: ready")
    starting = proc.stdout.readline()
    assert starting.startswith("madoi: model starting: loading not-a-model.gguf"), starting
    time.sleep(0.2)  # the child imports llama.cpp now
    took, out, err = stop_within_bound(proc)
    assert_stopped_cleanly(took, proc, out, err)
    assert not holders_of(model)  # no process left with the file open or mapped


def test_the_entry_knows_the_runner_childs_flag() -> None:
    """app.main compares the flag before importing the runner (which loads httpx): the two must agree."""
    import app.main
    from app.llm.runner.options import CHILD_FLAG

    assert app.main.CHILD_FLAG == CHILD_FLAG
