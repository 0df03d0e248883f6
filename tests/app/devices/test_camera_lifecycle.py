"""The camera is open only while it is used, every look is published, and the user's switch refuses looks.

Real OpenCV on a generated video file stands in for a webcam: "open" is the file's ``VideoCapture``.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.devices.camera import SWITCHED_OFF, OpenCVCamera
from companions.devices.ports import CameraInUse, CameraLooked, DeviceStatus, DeviceUnavailable
from companions.devices.responders import VisionResponder
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Query
from tests.app.media import write_test_video


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_test_video(tmp_path_factory.mktemp("media") / "webcam.avi")


class Events:
    """What the camera published, in order; :meth:`next` waits for the first one of a kind not taken yet."""

    def __init__(self, bus: InProcessBus) -> None:
        self.seen: list[object] = []
        self._taken: set[int] = set()
        self._changed = asyncio.Event()
        bus.subscribe("events", self._on_event, name="test-camera-events")

    def _on_event(self, item: object) -> None:
        if isinstance(item, (CameraInUse, CameraLooked, DeviceStatus)):
            self.seen.append(item)
            self._changed.set()

    async def next(self, kind: type, **fields: object) -> object:
        async with asyncio.timeout(5):
            while True:
                for index, item in enumerate(self.seen):
                    if index not in self._taken and isinstance(item, kind) \
                            and all(getattr(item, k) == v for k, v in fields.items()):
                        self._taken.add(index)
                        return item
                self._changed.clear()
                await self._changed.wait()

    def of(self, kind: type) -> list[object]:
        return [e for e in self.seen if isinstance(e, kind)]


async def test_the_device_is_opened_for_a_look_and_closed_after_it(video: Path, bus: InProcessBus) -> None:
    events = Events(bus)
    camera = OpenCVCamera(str(video), bus, linger_s=0.1)
    await camera.start()
    try:
        await events.next(DeviceStatus, available=True)  # found without opening it
        assert camera.stats.opened == 0
        assert not camera.in_use

        result = await VisionResponder(camera).respond(Query.create(from_="akari", type="vision"))
        assert result.succeeded
        assert camera.stats.opened == 1
        assert await events.next(CameraInUse) == CameraInUse(True)
        looked = await events.next(CameraLooked)
        assert isinstance(looked, CameraLooked)
        assert looked.looker == "akari"
        assert looked.refused == ""
        assert looked.description.startswith("On-device description")
        image = cv2.imdecode(np.frombuffer(looked.jpeg, np.uint8), cv2.IMREAD_COLOR)
        assert image is not None
        assert image.shape == (480, 640, 3)
        assert result.result is not None
        assert looked.at == result.result.body["timestamp"]

        assert await events.next(CameraInUse) == CameraInUse(False)  # closed once the look was done (and lingered)
        assert not camera.in_use
        assert camera.stats.closed == 1
        read = camera.stats.frames_read
        await asyncio.sleep(0.2)
        assert camera.stats.frames_read == read  # nothing reads the device while nobody uses it
    finally:
        await camera.stop()


async def test_the_preview_holds_the_device_open_and_looks_share_it(video: Path, bus: InProcessBus) -> None:
    events = Events(bus)
    camera = OpenCVCamera(str(video), bus, linger_s=0.05)
    await camera.start()
    try:
        preview = camera.hold("preview")
        assert camera.holders == ["preview"]
        await events.next(CameraInUse, in_use=True)
        first = await camera.capture(looker="akari")
        await asyncio.sleep(0.1)  # longer than the linger: the preview still holds it
        second = await camera.capture(looker="hina")
        assert second.timestamp > first.timestamp
        await events.next(CameraLooked, looker="hina")
        assert camera.in_use
        assert camera.stats.opened == 1
        assert [e.looker for e in events.of(CameraLooked)] == ["akari", "hina"]  # type: ignore[attr-defined]

        preview.release()
        preview.release()  # twice is once
        await events.next(CameraInUse, in_use=False)
        assert camera.holders == []
        assert await camera.preview() is None  # a closed camera keeps no frame
        assert camera.stats.opened == camera.stats.closed == 1
    finally:
        await camera.stop()


async def test_looks_in_a_row_keep_the_device_open_while_it_lingers(video: Path, bus: InProcessBus) -> None:
    camera = OpenCVCamera(str(video), bus, linger_s=5.0)
    await camera.start()
    try:
        for _ in range(3):
            await camera.capture(looker="akari")
        assert camera.stats.opened == 1
        assert camera.in_use
    finally:
        await camera.stop()
    assert camera.stats.closed == 1  # stopping the app closes a lingering device


async def test_the_switch_refuses_looks_without_reading_a_frame(video: Path, bus: InProcessBus) -> None:
    events = Events(bus)
    camera = OpenCVCamera(str(video), bus, linger_s=0.05)
    await camera.start()
    try:
        preview = camera.hold("preview")
        await events.next(CameraInUse, in_use=True)
        assert (await VisionResponder(camera).respond(Query.create(from_="akari", type="vision"))).succeeded

        await camera.switch(False)
        await events.next(CameraInUse, in_use=False)  # closed at once, though the preview still holds it
        assert not camera.switched_on
        off = await events.next(DeviceStatus, available=False)
        assert isinstance(off, DeviceStatus)
        assert off.reason == SWITCHED_OFF
        read = camera.stats.frames_read

        result = await VisionResponder(camera).respond(Query.create(from_="akari", type="vision"))
        assert not result.succeeded
        assert result.error == "no camera: the user turned the camera off"
        refused = await events.next(CameraLooked, looker="akari", refused=SWITCHED_OFF)
        assert isinstance(refused, CameraLooked)
        assert refused.jpeg == b""
        assert await camera.preview() is None
        await asyncio.sleep(0.1)
        assert camera.stats.frames_read == read
        assert camera.stats.opened == 1

        await camera.switch(True)  # on again: the preview that still holds it gets frames again
        await events.next(CameraInUse, in_use=True)
        assert camera.status.available
        assert (await camera.capture(looker="akari")).width == 640
        preview.release()
    finally:
        await camera.stop()


async def test_switched_off_from_the_start(video: Path, bus: InProcessBus) -> None:
    events = Events(bus)
    camera = OpenCVCamera(str(video), bus, switched_on=False)
    await camera.start()
    try:
        assert camera.status == DeviceStatus("camera", False, SWITCHED_OFF, str(video))
        hold = camera.hold("preview")
        with pytest.raises(DeviceUnavailable, match="the user turned the camera off"):
            await camera.capture(looker="akari")
        hold.release()
        assert camera.stats.opened == 0
        assert not events.of(CameraInUse)
    finally:
        await camera.stop()


async def test_a_look_on_a_missing_device_says_why_at_once(tmp_path: Path, bus: InProcessBus) -> None:
    camera = OpenCVCamera(str(tmp_path / "unplugged.avi"), bus, first_frame_timeout_s=30)
    await camera.start()
    try:
        async with asyncio.timeout(5):  # not the first frame's 30 s: the failure wakes the look
            with pytest.raises(DeviceUnavailable, match="no such device or video file"):
                await camera.capture(looker="akari")
    finally:
        await camera.stop()


async def test_a_few_frames_a_second_of_a_motion_jpeg_file_follow_its_timeline(tmp_path: Path) -> None:
    """Noticing holds the camera for 2 frames a second: of a 30 fps file (a webcam's stand-in), the frames kept are
    the ones its timeline is at, about 15 apart (those in between are taken off as packets: bench/presence.py
    measures what that saves)."""
    clip = write_test_video(tmp_path / "timeline.avi", frames=150, fps=30.0)
    reference = cv2.VideoCapture(str(clip))
    frames = []
    while (read := reference.read())[0]:
        frames.append(read[1].astype(np.int16))
    reference.release()
    camera = OpenCVCamera(str(clip), None)
    await camera.start()
    hold = camera.hold("notice", fps=2)
    kept: list[tuple[float, int]] = []  # when each frame was kept, and which frame of the file it is
    try:
        seq = 0
        while len(kept) < 6:
            await asyncio.sleep(0.05)
            grab = camera.latest()
            if grab is None or grab.seq == seq:
                continue
            seq = grab.seq
            image = grab.image.astype(np.int16)
            kept.append((grab.timestamp, int(np.argmin([np.abs(image - f).mean() for f in frames]))))
        reads = camera.stats.frames_read
    finally:
        hold.release()
        await camera.stop()
    assert reads <= len(kept) + 1  # frames kept, not every frame of the file
    for (at, index), (later_at, later) in itertools.pairwise(kept[1:]):
        played = round((later_at - at) * 30)
        assert (later - index) % 150 == pytest.approx(played, abs=3)  # where the timeline is, not the next frame
        assert 10 <= played <= 20  # 2 a second
