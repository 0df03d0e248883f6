"""The devices' shared fixtures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.devices.speaker import Pyttsx3Speaker
from companions.wire.bus import InProcessBus


@pytest.fixture
async def speaker(tmp_path: Path, bus: InProcessBus) -> AsyncIterator[Pyttsx3Speaker]:
    """The app's real speaker (Open JTalk and pyttsx3), writing its WAV files under ``tmp_path``; stopped after."""
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path / "speech")
    await speaker.start()
    yield speaker
    await speaker.stop()
