"""With "let them notice you" on, the status bar's camera switch says the camera is watching, in red like a webcam's
light, in English and Japanese; clicking the switch off turns it all off (the camera closes, watching stops). The
real runtime, the real camera adapter on a generated video file, MADOI_NOTICE=true as a user sets it."""

from __future__ import annotations

from pathlib import Path

import keyring.backends.fail
import pytest
from pytestqt.qtbot import QtBot

from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from tests.app.media import write_test_video
from tests.ui.conftest import started_runtime, switch_language
from tests.waiting import wait_until
from ui.camera.switch import LIGHT_COLOR
from ui.window.main_window import MainWindow


@pytest.fixture
def video(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    madoi_home.mkdir(parents=True, exist_ok=True)
    path = write_test_video(madoi_home / "webcam.avi", frames=30, face=True)
    monkeypatch.setenv("MADOI_CAMERA", str(path))
    return path


async def test_noticing_chosen_in_the_switch_s_menu_says_watching_and_the_switch_turns_it_all_off(
        qtbot: QtBot, video: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        switch_language("en")
        switch = window.camera_switch
        camera = runtime.parts.devices.camera
        presence = runtime.parts.devices.presence
        assert presence is not None
        notice = switch.notice_action
        # Off until the user chooses it: the camera stays closed.
        assert notice.text() == "Let them notice you"
        assert not notice.isChecked()
        assert switch.text() == "Camera on"
        assert not camera.in_use

        notice.trigger()  # the user chooses it in the switch's menu
        await wait_until(lambda: switch.watching, timeout=10)
        assert switch.text() == "Camera on · watching"
        assert LIGHT_COLOR in switch.styleSheet()  # the light is on
        assert "read on this computer and sent nowhere" in switch.toolTip()
        assert camera.in_use
        assert load_settings().settings.camera.notice  # saved: the next start notices too
        # and the first-run card no longer says the camera opens only when someone looks
        assert f"A camera was found ({video}); it stays open while the companions notice you" in \
            window.extras.first_run.machine_text()
        switch_language("ja")
        assert switch.text() == "カメラ オン · 見守り中"
        assert notice.text() == "見守ってもらう"
        switch_language("en")

        switch.click()  # off: for looks and for noticing
        await wait_until(lambda: switch.text() == "Camera off" and not camera.in_use and switch.isEnabled(),
                         timeout=10)  # (applied and saved: the switch may be clicked again)
        await wait_until(lambda: not presence.watching)  # it sees no frame come any more
        assert not runtime.settings.camera.on
        assert notice.isChecked()  # still chosen: it watches again once the camera is on
        switch.click()
        await wait_until(lambda: switch.watching, timeout=10)

        notice.trigger()  # and not chosen any more: the camera closes (after its linger)
        await wait_until(lambda: switch.text() == "Camera on" and not camera.in_use, timeout=10)
        assert not presence.watching  # (stopped before the camera closed)
        assert not load_settings().settings.camera.notice
        window.close()
