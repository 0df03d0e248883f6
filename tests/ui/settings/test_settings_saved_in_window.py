"""Saving the settings in the window of a started app applies them at once: a new speaking rate
holds for the next utterance, and a bridge port that is taken is said in a notification while the bridge keeps
serving on its old port."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.conftest import free_port
from tests.ui.conftest import signal_fired, started_runtime
from ui.window.main_window import MainWindow
from ui.window.notifications import Notification


async def test_a_taken_port_is_said_and_the_rest_applies(qtbot: QtBot, madoi_home: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(port))  # the tests' default (0) turns the bridge off
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        errors: asyncio.Queue[Notification] = asyncio.Queue()
        window.extras.notifications.shown.connect(
            lambda shown: errors.put_nowait(shown) if shown.level == "error" else None)
        dialog = window.extras.open_settings()
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            dialog.port.setText(str(taken.getsockname()[1]))
            dialog.rate.setValue(260)
            async with signal_fired(window.extras.settings_saved):
                dialog.save_button.click()
            shown = await asyncio.wait_for(errors.get(), 10)
        assert "cannot listen" in shown.text
        assert f"keeps listening on port {port}" in shown.text
        assert runtime.parts.bridge is not None
        assert runtime.parts.bridge.port == port  # the old bridge still serves
        assert runtime.parts.devices.speaker.rate == 260  # applied before the bridge's trouble
        window.close()


async def test_the_windows_settings_offer_each_companion_the_running_apps_voices(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        dialog = window.extras.open_settings()
        akari = dialog.companions.rows["akari"]
        assert akari.voice.count() > 1  # the card's voice, then the speech engine's voices for the language
        assert akari.test_voice_button.isEnabled()
        dialog.reject()
        window.close()
