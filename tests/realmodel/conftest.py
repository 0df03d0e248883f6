"""A real llama-cpp-python server (``python -m llama_cpp.server``) with a real small instruct model, as a user runs it.

``scripts/real_model.py`` (called by ``scripts/bootstrap.sh dev``) prepares the server's own virtualenv and the
model file. Each distinct server (chat format, interrupt setting) starts once per session on a free loopback port
and stops at the end. Under CI (``CI=true``) a missing server or model fails the tests; elsewhere they are skipped
with the reason. Select them with ``-m realmodel``, leave them out with ``-m "not realmodel"``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

STARTUP_TIMEOUT_S = 90.0
# Runs the server so that the kernel stops it when the test process dies, even by SIGKILL (PR_SET_PDEATHSIG, Linux):
# a leaked server would hold two cores for the rest of the run.
DIE_WITH_PARENT = (["-c", "import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 15); "
                          "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"]
                   if sys.platform == "linux" else [])


def _load_real_model_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_model_script", REPO / "scripts" / "real_model.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


real_model = _load_real_model_script()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "realmodel: needs the real llama-cpp-python server and model "
                                       "(scripts/real_model.py prepares them)")


@dataclass
class RealServer:
    """One running server: ``base_url`` ends in ``/v1``; ``model`` is the id its ``/v1/models`` lists."""

    base_url: str
    model: str
    chat_format: str | None
    interrupt_requests: bool
    process: subprocess.Popen[bytes]
    log: Path
    started_in_s: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _require_prepared() -> None:
    p = real_model.paths()
    missing = []
    if not p.server_ready():
        missing.append(f"the server's virtualenv ({p.venv})")
    if not p.model_ready():
        missing.append(f"the model file ({p.model})")
    if missing:
        reason = f"real model server not prepared: {' and '.join(missing)} missing; run scripts/real_model.py"
        if _in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


def start_real_server(log_dir: Path, chat_format: str | None = None, *, interrupt_requests: bool = True) -> RealServer:
    """Starts ``python -m llama_cpp.server`` and returns once ``GET /v1/models`` answers (bounded)."""
    _require_prepared()
    p = real_model.paths()
    port = _free_port()
    cmd = [str(p.python), *DIE_WITH_PARENT, "-m", "llama_cpp.server", "--model", str(p.model), "--host", "127.0.0.1",
           "--port", str(port), "--n_threads", "2", "--n_ctx", "8192"]
    if chat_format is not None:
        cmd += ["--chat_format", chat_format]
    if not interrupt_requests:
        cmd += ["--interrupt_requests", "False"]
    log = log_dir / f"llama-server-{chat_format or 'default'}-{port}.log"
    began = time.monotonic()
    with log.open("wb") as out:  # the server logs every request to stderr: a file never fills up like a pipe
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = RealServer(f"http://127.0.0.1:{port}/v1", "", chat_format, interrupt_requests, process, log)
    deadline = began + STARTUP_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the model server exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as answer:
                server.model = json.load(answer)["data"][0]["id"]
                break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"the model server did not answer within {STARTUP_TIMEOUT_S:.0f} s:\n"
                                   f"{server.log_tail()}") from None
            time.sleep(0.2)  # a server process loading its model: there is no event to wait on but its port
    server.started_in_s = time.monotonic() - began
    return server


class RealServers:
    """Starts each distinct server on first use and keeps it for the session (the model loads once per kind)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._running: dict[tuple[str | None, bool], RealServer] = {}

    def get(self, chat_format: str | None = None, *, interrupt_requests: bool = True) -> RealServer:
        key = (chat_format, interrupt_requests)
        if key not in self._running:
            self._running[key] = start_real_server(self.log_dir, chat_format, interrupt_requests=interrupt_requests)
        return self._running[key]

    def close(self) -> None:
        for server in self._running.values():
            server.stop()
        self._running.clear()


@pytest.fixture(scope="session")
def real_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServers]:
    servers = RealServers(tmp_path_factory.mktemp("llama-server"))
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="session")
def real_server(real_servers: RealServers) -> RealServer:
    """The server with the model's own chat template (no ``--chat_format``): what a new user starts."""
    return real_servers.get(None)
