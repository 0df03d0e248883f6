"""Fixtures shared by the app's tests (Qt-free, like the root conftest)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.app.playback import PLAYER, Players


@pytest.fixture
async def players(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Players]:
    """Counts the stand-in players (tests/app/playback.py) that Madoi starts to speak aloud."""
    players = Players()
    players.server = await asyncio.start_server(players._on_player, "127.0.0.1", 0)
    port = players.server.sockets[0].getsockname()[1]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    player = bin_dir / "pw-play"
    player.write_text(PLAYER.format(python=sys.executable, port=port))
    player.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    yield players
    players.server.close()
