"""The bundle's embedded model runner: ``madoi --model-runner-child`` (a frozen program has no ``python -m``) runs
llama-cpp-python's server from the bundle's own llama_cpp, its libraries (llama_cpp/lib) and uvicorn/FastAPI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType

import pytest

from app.llm.runner.options import CHILD_FLAG, CONFIG_ENV, ChildConfig
from scripts.script_modules import load_script
from tests.app.llm.gguf import write_gguf
from tests.conftest import free_port
from tests.packaging.conftest import bundle_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

KEY = "bundle-test-key"


def _config(model: Path, port: int) -> ChildConfig:
    # No weight repacking: this VM advertises AMX that it does not fully give (the runner's first safer step).
    return ChildConfig(model_file=str(model), alias="bundled", port=port, api_key=KEY, parent_pid=os.getpid(),
                       context=512, threads=2, batch=64, extra_buffers=False, mmap=True)


def _start(bundle: Path, tmp_path: Path, model: Path, port: int) -> subprocess.Popen[bytes]:
    """The child, its output to a file as the runner does (llama.cpp's load log would fill a pipe and block it)."""
    env = bundle_env(tmp_path / "home", **{CONFIG_ENV: _config(model, port).to_json()})
    with (tmp_path / "child.log").open("wb") as log:
        return subprocess.Popen([str(bundle / "madoi"), CHILD_FLAG], stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=tmp_path)


def _stop(proc: subprocess.Popen[bytes], tmp_path: Path) -> str:
    """Ends the child (if it still runs) and returns its output."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
    return (tmp_path / "child.log").read_text(encoding="utf-8", errors="replace")


def test_the_runner_child_loads_llama_cpp_and_its_server_and_refuses_a_header_only_file(
        bundle: Path, tmp_path: Path) -> None:
    """Without a loadable model: the child imports llama_cpp (its libllama), uvicorn and llama_cpp.server (the
    'madoi-model-runner:' line comes after those imports), hands the file to llama.cpp, and fails on it cleanly."""
    model = write_gguf(tmp_path / "header-only.gguf", size=4096)
    proc = _start(bundle, tmp_path, model, free_port())
    try:
        proc.wait(timeout=120)
    finally:
        err = _stop(proc, tmp_path)
    assert proc.returncode != 0, err[-3000:]  # no model to serve
    assert "madoi-model-runner: bundled on 127.0.0.1" in err, err[-3000:]
    for missing in ("No module named", "ModuleNotFoundError", "Shared library with base name", "cannot open shared"):
        assert missing not in err, err[-3000:]
    assert "gguf" in err.lower(), err[-3000:]  # llama.cpp itself read the file (its loader's messages)


def _real_model_script() -> ModuleType:
    return load_script("real_model")


def _get(url: str, body: dict[str, object] | None = None) -> dict[str, object]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Authorization": f"Bearer {KEY}",
                                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:  # loopback
        return dict(json.loads(answer.read()))


@pytest.mark.realmodel
def test_the_runner_child_serves_a_real_model(bundle: Path, tmp_path: Path) -> None:
    model = _real_model_script().paths().model
    if not Path(model).is_file():
        pytest.skip(f"the real model is not prepared ({model}); run scripts/real_model.py --model-only")
    port = free_port()
    proc = _start(bundle, tmp_path, Path(model), port)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "the child ended:\n" + _stop(proc, tmp_path)[-3000:]
            try:
                models = _get(f"{base}/models")
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "no answer from /v1/models in 120 s"
                time.sleep(0.5)
        assert [m["id"] for m in models["data"]] == ["bundled"]  # type: ignore[attr-defined,index]
        # The bundle's libggml-cpu generates: a few tokens of a real completion.
        reply = _get(f"{base}/chat/completions", {"model": "bundled", "max_tokens": 8, "temperature": 0,
                                                  "messages": [{"role": "user", "content": "Say hello."}]})
        assert reply["choices"][0]["message"]["content"].strip()  # type: ignore[index]
    finally:
        err = _stop(proc, tmp_path)
    assert "Traceback" not in err, err[-3000:]


def _runner_children(parent: int) -> list[int]:
    """The processes ``parent`` started as ``madoi --model-runner-child`` (Linux: read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and CHILD_FLAG.encode() in command:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.realmodel
def test_the_bundled_app_runs_its_model_through_the_runner(bundle: Path, tmp_path: Path) -> None:
    """``madoi --headless --model-file``: the app's ModelRunner starts the bundle's own program as its child (no
    ``python -m`` in a frozen app), the model answers, and a stop ends the child with the app."""
    model = _real_model_script().paths().model
    if not Path(model).is_file():
        pytest.skip(f"the real model is not prepared ({model}); run scripts/real_model.py --model-only")
    home = tmp_path / "home"
    proc = subprocess.Popen([str(bundle / "madoi"), "--headless", "--no-bridge", "--model-file", str(model)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=bundle_env(home),
                            cwd=tmp_path)
    lines: list[str] = []
    children: list[int] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 180
        while not any("model ready" in line for line in lines):
            line = proc.stdout.readline()
            assert line, "".join(lines) + (proc.stderr.read()[-3000:] if proc.stderr else "")
            lines.append(line)
            assert time.monotonic() < deadline, "".join(lines)
        children = _runner_children(proc.pid)
        assert children, "no runner child under the app"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "madoi: stopped" in out
    assert "Traceback" not in err, err[-3000:]
    assert not [pid for pid in children if Path(f"/proc/{pid}").exists()], "the runner's child outlived the app"
