"""The camera panel against a real started runtime whose camera is a generated video file (or missing, or off)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QTabWidget
from pytestqt.qtbot import QtBot

from app.devices.camera import SWITCHED_OFF
from app.runtime.panels import RuntimeDevices, RuntimePeople
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.devices.ports import CameraFrame, CameraInUse, CameraLooked
from companions.wire.protocol import Query
from tests.app.media import write_test_video
from tests.ui.conftest import signal_fired, started_runtime, switch_language
from tests.ui.scripted_runtime import until
from ui.camera.frame import BACKGROUND, FLASH_COLOR
from ui.camera.preview import CameraPreview
from ui.camera.texts import reason_text

VIDEO_BGR = (40, 90, 160)  # write_test_video's background


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_test_video(tmp_path_factory.mktemp("media") / "webcam.avi", frames=30)


def _panel(qtbot: QtBot, runtime: Runtime, language: str = "en", fps: float = 10.0) -> CameraPreview:
    switch_language(language)
    panel = CameraPreview(runtime.bus, RuntimeDevices(runtime).camera, RuntimePeople(runtime), fps=fps)
    qtbot.addWidget(panel)
    panel.resize(360, 420)  # taller than 4:3: the frame is letterboxed
    panel.show()
    panel.attach()
    return panel


def _close(actual: QColor, expected: tuple[int, int, int], tolerance: int = 24) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip((actual.red(), actual.green(), actual.blue()), expected,
                                                       strict=True))


async def _settle(panel: CameraPreview) -> None:
    """Waits for the preview request in flight, if any (its done-callback runs before this returns)."""
    task = panel.poll_task
    if task is not None:
        await asyncio.wait([task])


@pytest.mark.timing
async def test_frames_from_a_video_file_are_shown_scaled_with_the_indicator_on(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch, video: Path) -> None:
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    async with started_runtime() as runtime:
        began = time.monotonic()
        panel = _panel(qtbot, runtime, "ja", fps=10)
        shown: list[float] = []
        panel.frame_shown.connect(shown.append)
        await until(panel.frame_shown, lambda: len(shown) >= 4)
        elapsed = time.monotonic() - began

        assert panel.state == "live"
        assert panel.headline() == ""
        assert panel.detail() == ""
        assert not panel.indicator.isHidden()
        assert "カメラ使用中" in panel.indicator.text()
        assert shown == sorted(shown)
        assert len(set(shown)) == len(shown)
        pixmap = panel.frame()
        assert pixmap is not None
        assert not pixmap.isNull()
        assert (pixmap.width(), pixmap.height()) == (320, 240)  # the 640x480 file, previewed 320 px wide
        rect = panel.view.frame_rect()
        assert rect.width() == panel.view.width()  # as wide as the panel, letterboxed above and below
        assert abs(rect.width() / rect.height() - 4 / 3) < 0.02
        assert panel.view.rect().contains(rect)
        assert abs(rect.top() - (panel.view.height() - rect.bottom() - 1)) <= 1  # centred

        # What a person sees: the video's background inside the frame, the panel's own outside it.
        image = panel.view.grab().toImage()
        b, g, r = VIDEO_BGR
        assert _close(image.pixelColor(rect.right() - 4, rect.bottom() - 4), (r, g, b))
        assert image.pixelColor(rect.center().x(), 2) == BACKGROUND

        # Throttled: never more requests than the timer's rate allows, and decoding a frame is cheap.
        stats = panel.stats
        assert stats.requests <= elapsed * 10 + 2
        assert stats.frames == len(shown)
        # ~0.6 ms a frame; the worst one is left out (the first loads Qt's JPEG plugin, and the GIL may be busy)
        assert (stats.decode_s - stats.decode_max_s) / (stats.frames - 1) < 0.005
        panel.detach()
        await _settle(panel)


async def test_camera_turned_off_shows_the_reason_in_both_languages_and_no_indicator(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:  # MADOI_CAMERA=none in the test environment
        panel = _panel(qtbot, runtime, "en")
        assert panel.state == "off"
        assert panel.headline() == "No camera"
        assert panel.detail() == "turned off in the settings"
        assert panel.indicator.isHidden()
        assert panel.frame() is None
        assert panel.polling
        assert panel.stats.requests == 0
        assert panel.view.accessibleDescription() == "No camera: turned off in the settings"

        switch_language("ja")
        assert panel.headline() == "カメラを使えません"
        assert panel.detail() == "設定でオフになっています"
        panel.detach()


async def test_no_devices_before_the_runtime_starts(qtbot: QtBot, madoi_home: Path) -> None:
    runtime = Runtime(load_settings())  # not started: no devices yet
    try:
        panel = _panel(qtbot, runtime, "ja")
        assert not runtime.started
        assert panel.state == "off"
        assert panel.detail() == "デバイスが動いていません"
        assert panel.indicator.isHidden()
        panel.detach()
    finally:
        await runtime.bus.aclose()


async def test_a_missing_device_shows_why_and_the_preview_starts_when_it_appears(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    source = tmp_path / "usb-camera.avi"
    monkeypatch.setenv("MADOI_CAMERA", str(source))
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "en")
        await until(panel.state_changed, lambda: "no such device" in panel.detail())
        assert panel.state == "off"
        assert panel.detail() == f"no such device or video file {str(source)!r}"
        assert panel.indicator.isHidden()
        switch_language("ja")
        assert panel.detail() == f"デバイスまたは動画ファイル {str(source)!r} が見つかりません"

        # The device appears (written elsewhere, then moved in whole): the camera's retry finds it, the panel goes
        # live from the DeviceStatus event without being told.
        write_test_video(tmp_path / "partial.avi", frames=10).rename(source)
        await until(panel.frame_shown, lambda: panel.state == "live", timeout=15)
        assert not panel.indicator.isHidden()
        assert panel.frame() is not None
        panel.detach()
        await _settle(panel)


async def test_a_vision_query_flashes_the_panel_with_the_companions_name(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch, video: Path) -> None:
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    async with started_runtime() as runtime:
        panel = _panel(qtbot, runtime, "ja")
        await until(panel.frame_shown, lambda: panel.state == "live")
        looked: list[str] = []
        at_flash: list[tuple[bool, float, QColor]] = []  # what the panel showed when it flashed

        def on_flash(who: str) -> None:
            looked.append(who)
            border = panel.view.grab().toImage().pixelColor(2, panel.view.height() // 2)
            at_flash.append((panel.flashing, panel.view.flash, border))

        panel.flashed.connect(on_flash)
        runtime.bus.publish(Query.create(from_="akari", type="weather"))  # not a look: no flash
        runtime.bus.publish(CameraLooked("akari", time.time(), refused=SWITCHED_OFF))  # nothing seen: no flash
        broker = runtime.parts.broker
        assert broker is not None
        async with signal_fired(panel.flashed):
            result = await broker.send_query(Query.create(from_="akari", type="vision"), timeout=5)
        assert result.succeeded  # the companion did see a frame
        assert looked == ["akari"]
        assert panel.look_text() == "あかりが見ました"
        flashing, strength, border = at_flash[0]
        assert flashing
        assert strength == 1.0
        assert _close(border, (FLASH_COLOR.red(), FLASH_COLOR.green(), FLASH_COLOR.blue()))

        # The highlight fades out by itself (an animation, no sleeps); the caption stays a little longer.
        async with signal_fired(panel.flash_animation.finished):
            pass
        assert not panel.flashing
        assert panel.view.flash == 0.0
        assert panel.look_text() == "あかりが見ました"

        # English words in English; someone the cast does not know is named by their id.
        switch_language("en")
        async with signal_fired(panel.flashed):
            await broker.send_query(Query.create(from_="hina", type="vision"), timeout=5)
        assert panel.look_text() == "Hina looked"
        async with signal_fired(panel.flashed):
            runtime.bus.publish(CameraLooked("robot-arm", time.time(), b"jpeg"))
        assert looked == ["akari", "hina", "robot-arm"]
        assert panel.look_text() == "robot-arm looked"
        panel.detach()
        await _settle(panel)


async def test_polling_pauses_while_hidden_and_stops_at_detach_with_no_task_left(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch, video: Path) -> None:
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    async with started_runtime() as runtime:
        panel = CameraPreview(runtime.bus, RuntimeDevices(runtime).camera, RuntimePeople(runtime))
        tabs = QTabWidget()
        qtbot.addWidget(tabs)
        tabs.addTab(QLabel("chat"), "Chat")
        tabs.addTab(panel, "Camera")
        tabs.resize(400, 400)
        tabs.show()
        panel.attach()
        assert not panel.polling  # another tab is shown
        tabs.setCurrentWidget(panel)
        assert panel.polling
        await until(panel.frame_shown, lambda: panel.stats.frames >= 2)

        tabs.setCurrentIndex(0)
        assert not panel.polling
        await _settle(panel)
        assert panel.poll_task is None
        requests = panel.stats.requests
        tabs.setCurrentWidget(panel)  # shown again: polls at once and goes on
        assert panel.polling
        assert panel.stats.requests == requests + 1
        await until(panel.frame_shown, lambda: panel.stats.frames >= 4)

        # A slow camera: ticks that find the request still in flight are skipped, never stacked.
        entered = asyncio.Event()
        cancelled = asyncio.Event()
        stuck_calls = 0

        async def stuck(max_width: int = 320) -> CameraFrame | None:
            nonlocal stuck_calls
            stuck_calls += 1
            entered.set()
            try:
                await asyncio.get_running_loop().create_future()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return None

        assert runtime.parts.devices is not None
        monkeypatch.setattr(runtime.parts.devices.camera, "preview", stuck)
        await asyncio.wait_for(entered.wait(), 5)
        task = panel.poll_task
        assert task is not None
        requests, skipped = panel.stats.requests, panel.stats.skipped
        await until(panel.timer.timeout, lambda: panel.stats.skipped >= skipped + 3)
        assert panel.stats.requests == requests
        assert stuck_calls == 1
        assert panel.poll_task is task

        # Detach while that request is in flight: it is cancelled and forgotten, the bus is let go.
        subscribers = runtime.bus.subscriber_count
        panel.detach()
        assert not panel.polling
        await asyncio.wait([task])
        assert cancelled.is_set()
        assert task.cancelled()
        assert panel.poll_task is None
        assert runtime.bus.subscriber_count == subscribers - 1
        tabs.setCurrentIndex(0)
        tabs.setCurrentWidget(panel)  # showing a detached panel does not start it again
        assert not panel.polling
        assert panel.poll_task is None


async def test_a_failing_preview_shows_an_error_state_and_polling_goes_on(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch, video: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    async with started_runtime() as runtime:
        assert runtime.parts.devices is not None
        camera = runtime.parts.devices.camera
        real_preview = camera.preview
        calls = 0

        async def flaky(max_width: int = 320) -> CameraFrame | None:
            nonlocal calls
            calls += 1
            if calls <= 3:
                raise RuntimeError(f"the lens fell off ({calls})")
            return await real_preview(max_width)

        monkeypatch.setattr(camera, "preview", flaky)
        caplog.set_level(logging.INFO, logger="ui.camera.preview")
        panel = _panel(qtbot, runtime, "en")
        await until(panel.state_changed, lambda: panel.state == "error")
        assert panel.headline() == "The preview failed"
        assert panel.detail().startswith("the lens fell off")
        assert panel.indicator.isHidden()
        assert panel.frame() is None
        assert panel.polling

        await until(panel.frame_shown, lambda: panel.state == "live")  # the next requests succeed
        assert panel.stats.errors == 3
        assert calls > 3
        assert not panel.indicator.isHidden()
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1  # once per streak, not once per tick
        assert any("frames again" in r.getMessage() for r in caplog.records)
        panel.detach()
        await _settle(panel)


def test_reasons_in_japanese_and_unknown_ones_as_they_are() -> None:
    assert reason_text("no camera: cannot open '0'", "ja") == "'0' を開けません"
    assert reason_text("no camera: cannot open '0'", "en") == "cannot open '0'"
    assert reason_text("no camera: no video device /dev/video0", "ja") == "ビデオデバイス /dev/video0 がありません"
    assert reason_text("the driver says no", "ja") == "the driver says no"


async def test_the_device_is_open_only_while_the_preview_is_shown_or_someone_looks(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch, video: Path) -> None:
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    async with started_runtime() as runtime:
        assert runtime.parts.devices is not None
        camera = runtime.parts.devices.camera
        camera.linger_s = 0.05
        in_use: list[bool] = []
        opened = asyncio.Event()
        closed = asyncio.Event()

        def on_event(item: object) -> None:
            if isinstance(item, CameraInUse):
                in_use.append(item.in_use)
                (opened if item.in_use else closed).set()

        runtime.bus.subscribe("events", on_event, name="test-in-use")
        panel = CameraPreview(runtime.bus, RuntimeDevices(runtime).camera, RuntimePeople(runtime))
        tabs = QTabWidget()
        qtbot.addWidget(tabs)
        tabs.addTab(QLabel("chat"), "Chat")
        tabs.addTab(panel, "Camera")
        tabs.show()
        panel.attach()
        assert not camera.in_use  # the panel is in a hidden tab and nobody looks: the device stays closed
        assert camera.stats.opened == 0

        broker = runtime.parts.broker
        assert (await broker.send_query(Query.create(from_="akari", type="vision"), timeout=5)).succeeded
        await asyncio.wait_for(closed.wait(), 5)  # opened for the look, closed after it
        assert in_use == [True, False]

        opened.clear()
        closed.clear()
        tabs.setCurrentWidget(panel)
        await asyncio.wait_for(opened.wait(), 5)
        await until(panel.frame_shown, lambda: panel.state == "live")
        assert camera.holders == ["preview"]
        tabs.setCurrentIndex(0)
        await asyncio.wait_for(closed.wait(), 5)
        assert in_use == [True, False, True, False]
        assert camera.holders == []
        assert panel.frame() is None  # a hidden preview keeps no stale picture
        panel.detach()
        await _settle(panel)
