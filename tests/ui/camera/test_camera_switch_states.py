"""The status bar's camera switch says "No camera" (not "Camera on") when there is no camera to switch: turned off in
the settings, or not found; and the first-run card says what it knows of a camera: that it was found (the device or
the video file is there), not that it works, since it is opened only when someone looks. The real runtime, the
real camera adapter on a generated video file, the settings applied as the dialog's Save applies them."""

from __future__ import annotations

from pathlib import Path

import keyring.backends.fail
import pytest
from pytestqt.qtbot import QtBot

from app.settings.secrets import SecretStore
from tests.app.media import write_test_video
from tests.ui.conftest import started_runtime, switch_language
from ui.window.main_window import MainWindow


async def _window(qtbot: QtBot, runtime: object) -> MainWindow:
    window = MainWindow(runtime, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))  # type: ignore[arg-type]
    qtbot.addWidget(window)
    window.show()
    await window.attach()
    switch_language("en")
    return window


async def test_turned_off_in_the_settings_the_switch_says_no_camera(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:  # MADOI_CAMERA=none: turned off in the settings
        window = await _window(qtbot, runtime)
        switch = window.camera_switch
        assert runtime.settings.camera.on  # the switch's own setting is on ...
        assert switch.text() == "No camera"  # ... but there is no camera: it never said "Camera on"
        assert not switch.isEnabled()
        assert "turned off in the settings" in switch.toolTip()
        assert "No camera (turned off in the settings)." in window.extras.first_run.machine_text()
        window.close()


@pytest.fixture
def video(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    madoi_home.mkdir(parents=True, exist_ok=True)
    path = write_test_video(madoi_home / "webcam.avi", frames=5)
    monkeypatch.setenv("MADOI_CAMERA", str(path))
    return path


async def test_a_camera_found_is_said_as_found_and_the_switch_follows_the_settings(
        qtbot: QtBot, video: Path) -> None:
    async with started_runtime() as runtime:
        window = await _window(qtbot, runtime)
        switch = window.camera_switch
        assert switch.text() == "Camera on"
        assert switch.isEnabled()
        said = window.extras.first_run.machine_text()
        assert f"A camera was found ({video}); it is opened only when someone looks." in said
        assert "The camera works" not in said
        assert runtime.parts.devices.camera.stats.opened == 0  # found without opening it

        # The camera is turned off in the settings' Camera tab and saved: the switch follows at once.
        settings = runtime.settings.model_copy(deep=True)
        settings.camera.source = "none"
        await runtime.apply_settings(settings)
        await runtime.bus.drain()  # the switch follows the camera's status
        assert switch.text() == "No camera"
        assert not switch.isEnabled()
        window.close()
