"""Shared fixtures. Kept free of Qt so that the core-only run (tests.block_gui) can load it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def madoi_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty MADOI_HOME, and no other MADOI_* variable leaking in from the developer's shell."""
    for name in list(os.environ):
        if name.startswith("MADOI_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("MADOI_HOME", str(home))
    monkeypatch.setenv("MADOI_BRIDGE_PORT", "0")
    return home


def subprocess_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for a Madoi child process using ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MADOI_")}
    env.update({"MADOI_HOME": str(home), "MADOI_BRIDGE_PORT": "0", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


PYTHON = sys.executable
