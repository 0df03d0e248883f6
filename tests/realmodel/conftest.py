"""A real llama-cpp-python server (``python -m llama_cpp.server``) with a real small instruct model, as a user runs it.

``scripts/real_model.py`` (called by ``scripts/bootstrap.sh dev``) prepares the server's own virtualenv and the
model file. Each distinct server (chat format, interrupt setting) starts once per session on a free loopback port
and stops at the end. Under CI (``CI=true``) a missing server or model fails the tests; elsewhere they are skipped
with the reason. Select them with ``-m realmodel``, leave them out with ``-m "not realmodel"``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.script_modules import load_script

real_model = load_script("real_model")


RealServer = real_model.RealServer


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


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
    """Starts the server (``scripts/real_model.py``'s ``start_server``) once it is prepared, else skips or fails."""
    _require_prepared()
    return real_model.start_server(log_dir, chat_format, interrupt_requests=interrupt_requests, last_logits_only=True)


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
