"""Shared fixtures. Kept free of Qt so that the core-only run (tests.block_gui) can load it."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import socketserver
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from companions.wire.bus import InProcessBus
from companions.wire.query_broker import QueryBroker

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parent.parent


# A test machine has no camera, no sound card and no language model unless a test provides one; the bridge listens
# on a free port. Speech is rendered to WAV files under the home (real pyttsx3 + espeak-ng).
TEST_DEFAULTS = {
    "MADOI_BRIDGE_PORT": "0",
    "MADOI_CAMERA": "none",
    "MADOI_LLM_AUTODETECT_LOCAL": "false",
    "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
}


@pytest.fixture
def madoi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty MADOI_HOME, and no other MADOI_* variable leaking in from the developer's shell."""
    for name in list(os.environ):
        if name.startswith("MADOI_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("MADOI_HOME", str(home))
    for name in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")  # the language until one is chosen (system_language)
    for name, value in TEST_DEFAULTS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MADOI_VOICE_OUTPUT_DIR", str(home / "speech"))
    return home


def subprocess_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for a Madoi child process using ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MADOI_")}
    env.update({"MADOI_HOME": str(home), "MADOI_VOICE_OUTPUT_DIR": str(home / "speech"), "PYTHONUNBUFFERED": "1"})
    env.update(TEST_DEFAULTS)
    env.update(extra)
    return env


PYTHON = sys.executable


def free_port() -> int:
    """A loopback port nothing listens on (for a server to take, or to find closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    """Runs ``server`` (an HTTP server on loopback) on a thread of its own until the block ends, then closes it."""
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), name=type(server).__name__, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
async def bus() -> AsyncIterator[InProcessBus]:
    """An in-process bus, closed after the test."""
    bus = InProcessBus()
    yield bus
    await bus.aclose()


@pytest.fixture
async def broker(bus: InProcessBus) -> AsyncIterator[QueryBroker]:
    """A started query broker on the ``bus`` fixture's bus, closed after the test."""
    broker = QueryBroker(bus)
    await broker.start()
    yield broker
    await broker.aclose()


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """Madoi's log set up as the app does, in a file of the test's own; its handlers removed afterwards."""
    from app.runtime.logs import (
        setup_logging,  # here, not above: the core-only run (tests.block_gui) loads this file too
    )

    path = tmp_path / "data" / "madoi.log"
    setup_logging(path, stderr=False)
    yield path
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_madoi", False):
            root.removeHandler(handler)
            handler.close()


def log_text(path: Path) -> str:
    """What the log of the ``log_file`` fixture holds so far."""
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")

