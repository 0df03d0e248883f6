"""The OpenCV camera adapter against generated video files (real OpenCV, no webcam needed)."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from app.devices.camera import OpenCVCamera, parse_source
from app.devices.vision_description import face_detection_problem
from companions.devices.ports import DeviceStatus, DeviceUnavailable
from companions.devices.responders import VisionResponder
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Query
from tests.app.media import write_test_video
from tests.waiting import wait_until


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_test_video(tmp_path_factory.mktemp("media") / "moving.avi")


async def statuses(bus: InProcessBus) -> tuple[list[DeviceStatus], asyncio.Queue[DeviceStatus]]:
    seen: list[DeviceStatus] = []
    queue: asyncio.Queue[DeviceStatus] = asyncio.Queue()

    def on_event(item: object) -> None:
        if isinstance(item, DeviceStatus):
            seen.append(item)
            queue.put_nowait(item)

    bus.subscribe("events", on_event, name="test-status")
    return seen, queue


async def next_status(queue: asyncio.Queue[DeviceStatus], available: bool) -> DeviceStatus:
    async with asyncio.timeout(5):
        while True:
            status = await queue.get()
            if status.available is available:
                return status


def test_parse_source() -> None:
    assert parse_source("0") == 0
    assert parse_source(" none ") is None
    assert parse_source("") is None
    assert parse_source("rtsp://cam/stream") == "rtsp://cam/stream"
    assert parse_source("/videos/a.avi") == "/videos/a.avi"


async def test_vision_query_returns_the_latest_frame_as_base64_jpeg(video: Path, bus: InProcessBus) -> None:
    _, queue = await statuses(bus)
    camera = OpenCVCamera(str(video), bus)
    await camera.start()
    try:
        await next_status(queue, True)
        assert camera.status.available
        asked = time.time()
        result = await VisionResponder(camera).respond(Query.create(from_="alice", type="vision"))
        assert result.succeeded
        assert result.result is not None
        body = result.result.body
        assert body["mime"] == "image/jpeg"
        assert (body["width"], body["height"]) == (640, 480)
        image = cv2.imdecode(np.frombuffer(base64.b64decode(body["image"]), np.uint8), cv2.IMREAD_COLOR)
        assert image.shape == (480, 640, 3)
        # The frame is fresh: grabbed within a couple of frame periods of the question (the description, OCR
        # included, takes longer than that to make).
        assert body["timestamp"] > asked - 0.5
        assert body["description"].startswith("On-device description (OpenCV, no AI model")
        description = body["description_details"]
        assert "on-device" in description["source"]
        assert "no AI model" in description["summary"]
        if face_detection_problem() is None:
            assert description["faces"] == 0  # shapes only: no false faces
        else:  # OpenCV 5 ships no Haar cascade: say so rather than guess
            assert description["faces"] is None
            assert "faces not counted" in description["summary"]
        assert description["colours"]
        assert sum(c["share"] for c in description["colours"]) == pytest.approx(1, 0.01)
    finally:
        await camera.stop()


async def test_file_loops_at_its_own_frame_rate_without_reopening(video: Path) -> None:
    camera = OpenCVCamera(str(video))
    await camera.start()
    try:
        first = await camera.capture()
        counters = []
        # 30 frames at 30 fps: one second of video; keep looking for 1.3 s and the clip must have looped.
        deadline = time.monotonic() + 1.3
        while time.monotonic() < deadline:
            frame = await camera.capture()
            counters.append(frame.timestamp)
            await asyncio.sleep(camera.frame_period)
        assert camera.frame_period == pytest.approx(1 / 30, rel=0.01)
        assert len(set(counters)) > 10  # new frames keep coming past the end of the file
        assert counters[-1] > first.timestamp + 1.0
        # Paced like a camera, not read as fast as the disk allows.
        assert camera._latest is not None
        assert camera._latest.seq < 60
    finally:
        await camera.stop()


async def test_faces_are_counted_with_the_cascade_opencv_ships(tmp_path: Path) -> None:
    clip = write_test_video(tmp_path / "face.avi", frames=10, face=True)
    camera = OpenCVCamera(str(clip))
    await camera.start()
    try:
        frame = await camera.capture(describe=True)
    finally:
        await camera.stop()
    assert frame.description is not None
    problem = face_detection_problem()
    if problem is None:  # OpenCV 4.x: the Haar cascade finds the drawn face and nothing else
        assert frame.description.faces == 1
        assert "One person is in view." in frame.description.summary
    else:  # OpenCV 5.0 ships neither CascadeClassifier nor the cascades: the description says so, honestly
        assert frame.description.faces is None
        assert f"People could not be counted ({problem})." in frame.description.summary


async def test_motion_since_last_look_is_reported(tmp_path: Path) -> None:
    still = write_test_video(tmp_path / "still.avi", frames=10, moving=False, background=(10, 10, 10))
    # A 4-second loop, and the second look waits for a few newer frames: under load the first look's OCR can take
    # about as long as a 1-second loop, and the second look then lands on the very same frame again.
    long_video = write_test_video(tmp_path / "long.avi", frames=120)
    camera = OpenCVCamera(str(long_video))
    await camera.start()
    try:
        first = await camera.capture(describe=True)
        assert first.description is not None
        assert first.description.motion is None
        read = camera.stats.frames_read
        await wait_until(lambda: camera.stats.frames_read >= read + 3, "three newer frames")
        second = await camera.capture(describe=True)
        assert second.description is not None
        assert second.description.motion > 0.005
    finally:
        await camera.stop()
    camera = OpenCVCamera(str(still))
    await camera.start()
    try:
        await camera.capture(describe=True)
        await asyncio.sleep(0.2)
        again = await camera.capture(describe=True)
        assert again.description is not None
        assert again.description.motion_label == "none"
        assert again.description.brightness_label == "dark"
    finally:
        await camera.stop()


async def test_no_camera_is_an_error_result_and_a_visible_status(tmp_path: Path, bus: InProcessBus,
                                                                  video: Path) -> None:
    seen, queue = await statuses(bus)
    camera = OpenCVCamera(str(tmp_path / "missing.avi"), bus, retry_s=0.05)
    await camera.start()
    try:
        down = await next_status(queue, False)
        assert down.reason.startswith("no camera:")
        assert "missing.avi" in down.reason
        result = await VisionResponder(camera).respond(Query.create(from_="alice", type="vision"))
        assert not result.succeeded
        assert result.error is not None
        assert result.error.startswith("no camera:")
        # Retrying does not flood the bus with the same status.
        await asyncio.sleep(0.2)
        assert len([s for s in seen if not s.available]) == 1
        # Settings changed: the new source is checked and the camera comes up.
        await camera.reconfigure(str(video))
        up = await next_status(queue, True)
        assert up.source == str(video)
        assert (await camera.capture()).width == 640
    finally:
        await camera.stop()


async def test_a_missing_webcam_is_named(bus: InProcessBus) -> None:
    camera = OpenCVCamera("9", bus)  # no machine running these tests has ten webcams
    await camera.start()
    try:
        with pytest.raises(DeviceUnavailable, match=r"no camera: (no video device /dev/video9|cannot open '9')"):
            await camera.capture()
    finally:
        await camera.stop()


async def test_turned_off_and_disappearing_sources(tmp_path: Path, bus: InProcessBus) -> None:
    camera = OpenCVCamera("none", bus)
    await camera.start()
    with pytest.raises(DeviceUnavailable, match="turned off"):
        await camera.capture()
    await camera.stop()

    # A file that vanishes and is replaced by garbage: the grabber notices when it tries to reopen it.
    clip = write_test_video(tmp_path / "short.avi", frames=3)
    _, queue = await statuses(bus)
    camera = OpenCVCamera(str(clip), bus, retry_s=0.05)
    await camera.start()
    try:
        await next_status(queue, True)  # the file is there (found without opening it)
        assert (await camera.capture()).width == 640
        await camera.stop()
        clip.write_bytes(b"not a video")  # the source is gone by the time it is opened again
        await camera.start()
        with pytest.raises(DeviceUnavailable, match="cannot open"):
            await camera.capture()
        down = await next_status(queue, False)
        assert "cannot open" in down.reason
    finally:
        await camera.stop()


async def test_preview_is_small(video: Path) -> None:
    camera = OpenCVCamera(str(video))
    assert await camera.preview() is None
    await camera.start()
    try:
        await camera.capture()
        preview = await camera.preview(160)
        assert preview is not None
        assert (preview.width, preview.height) == (160, 120)
    finally:
        await camera.stop()


async def test_encoding_and_description_run_off_the_loop(video: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.devices.camera as camera_module

    threads: list[int] = []
    real_describe = camera_module.describe_frame
    real_encode = camera_module.encode_jpeg

    def describe_spy(*args: Any) -> Any:
        threads.append(threading.get_ident())
        return real_describe(*args)

    def encode_spy(*args: Any) -> bytes:
        threads.append(threading.get_ident())
        return real_encode(*args)

    monkeypatch.setattr(camera_module, "describe_frame", describe_spy)
    monkeypatch.setattr(camera_module, "encode_jpeg", encode_spy)
    camera = OpenCVCamera(str(video))
    await camera.start()
    try:
        for _ in range(3):
            await camera.capture(describe=True)
            await asyncio.sleep(camera.frame_period)
    finally:
        await camera.stop()
    assert len(threads) >= 4
    assert threading.get_ident() not in threads
