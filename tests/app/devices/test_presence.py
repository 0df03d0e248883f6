"""Noticing through the camera: the real camera adapter playing generated room videos (real OpenCV, its Haar cascade),
the watcher reading a few frames a second, what it noticed on the bus. The stories run faster than life (the
watcher reads more frames a second and waits fewer), so each takes a few seconds."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.devices import presence
from app.devices.camera import OpenCVCamera, encode_jpeg
from app.devices.faces import face_boxes, face_detection_problem
from app.devices.presence import NoticeTimes, PresenceDetector, PresenceWatcher
from app.devices.wiring import build_devices
from app.settings.model import Settings, load_settings
from companions.devices.presence import PresenceKind, PresenceNoticed, PresenceWatching
from companions.wire.bus import InProcessBus
from tests.app.devices.room_videos import LEFT, RIGHT, Scene, write_room_video
from tests.app.media import write_test_video
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(face_detection_problem() is not None, reason="this OpenCV build counts no faces")

FAST = 4.0  # the stories run this many times faster than life
# The waits for a story 4x faster than life, read at 8 frames a second: those in frames as in life but the room's
# (the room follows the picture per frame), those in seconds four times shorter.
TIMES_FAST = NoticeTimes(leave_s=10.0 / FAST, return_after_s=8.0 / FAST, settle_frames=8)


def faster(scenes: Sequence[Scene]) -> list[Scene]:
    return [dataclasses.replace(scene, seconds=scene.seconds / FAST) for scene in scenes]


class Noticed:
    """What noticing published on the bus."""

    def __init__(self, bus: InProcessBus) -> None:
        self.events: list[PresenceNoticed] = []
        self.watching: list[bool] = []
        bus.subscribe("events", self._on, name="test-noticed")

    def _on(self, item: object) -> None:
        if isinstance(item, PresenceNoticed):
            self.events.append(item)
        elif isinstance(item, PresenceWatching):
            self.watching.append(item.watching)

    @property
    def kinds(self) -> list[PresenceKind]:
        return [event.kind for event in self.events]


@pytest.fixture
async def watched(bus: InProcessBus) -> AsyncIterator[tuple[Noticed, list[OpenCVCamera | PresenceWatcher]]]:
    parts: list[OpenCVCamera | PresenceWatcher] = []
    yield Noticed(bus), parts
    for part in reversed(parts):
        await part.stop()


async def watch(video: Path, bus: InProcessBus, parts: list[OpenCVCamera | PresenceWatcher], *,
                fps: float = 2.0 * FAST) -> tuple[OpenCVCamera, PresenceWatcher]:
    camera = OpenCVCamera(str(video), bus)
    watcher = PresenceWatcher(camera, bus, on=True, fps=fps, times=TIMES_FAST)
    parts.extend([camera, watcher])
    await camera.start()
    await watcher.start()
    return camera, watcher


async def test_someone_arriving_a_second_person_a_book_held_up_and_the_light_going_out_are_noticed(
        tmp_path: Path, bus: InProcessBus, watched: tuple[Noticed, list[OpenCVCamera | PresenceWatcher]]) -> None:
    noticed, parts = watched
    story = faster([
        Scene(2),  # nobody
        Scene(3, faces=(RIGHT,)),
        Scene(3, faces=(RIGHT, LEFT)),
        Scene(5, faces=(RIGHT,)),  # (the room takes the person in)
        Scene(3, faces=(RIGHT,), held_up=True),
        Scene(2, faces=(RIGHT,)),
        Scene(4, faces=(RIGHT,), light=0.1),  # the light goes out
    ])
    video = write_room_video(tmp_path / "story.avi", story, fps=10)
    await watch(video, bus, parts)
    expected = ["arrived", "second_person", "held_up", "dark"]
    await wait_until(lambda: len(noticed.kinds) >= 4, timeout=20)
    assert noticed.kinds[:4] == expected
    arrived, second, held, dark = noticed.events[:4]
    assert (arrived.people, second.people, held.people) == (1, 2, 1)
    # one at a time, each after the one before
    assert arrived.at < second.at < held.at < dark.at
    assert noticed.watching[0] is True


async def test_what_was_noticed_carries_the_frame_that_showed_it_encoded_for_that_frame_only(
        tmp_path: Path, bus: InProcessBus, watched: tuple[Noticed, list[OpenCVCamera | PresenceWatcher]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat shows what was noticed with its picture (ui/chat/looks.py): the event holds the frame as a JPEG of the
    camera's size, the person in it; and of all the frames read, only the one with an event was encoded."""
    encoded: list[tuple[int, ...]] = []

    def encode(image: np.ndarray, quality: int = 80) -> bytes:
        encoded.append(image.shape)
        return encode_jpeg(image, quality)

    monkeypatch.setattr(presence, "encode_jpeg", encode)
    noticed, parts = watched
    video = write_room_video(tmp_path / "arrives.avi", faster([Scene(2), Scene(6, faces=(RIGHT,))]), fps=10)
    _, watcher = await watch(video, bus, parts)
    await wait_until(lambda: len(noticed.kinds) >= 1, timeout=20)
    await wait_until(lambda: watcher.frames_read >= 10, timeout=20)  # more frames read after it, none encoded
    assert noticed.kinds == ["arrived"]
    [arrived] = noticed.events
    assert (arrived.width, arrived.height) == (640, 480)
    picture = cv2.imdecode(np.frombuffer(arrived.jpeg, dtype=np.uint8), cv2.IMREAD_COLOR)
    assert picture is not None
    assert picture.shape == (480, 640, 3)
    faces = face_boxes(cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY)) or []
    assert len(faces) == 1  # the person who arrived, where they sit
    x, y, w, h = faces[0]
    assert abs(x + w / 2 - RIGHT[0]) < 40
    assert abs(y + h / 2 - RIGHT[1]) < 40
    assert encoded == [(480, 640, 3)]
    assert "jpeg" not in repr(arrived)  # a log line that shows the event holds no picture


async def test_someone_leaving_and_coming_back_after_a_while_is_told_how_long_they_were_away(
        tmp_path: Path, bus: InProcessBus, watched: tuple[Noticed, list[OpenCVCamera | PresenceWatcher]]) -> None:
    noticed, parts = watched
    story = faster([Scene(3, faces=(RIGHT,)), Scene(12), Scene(4, faces=(RIGHT,))])
    video = write_room_video(tmp_path / "away.avi", story, fps=10)
    await watch(video, bus, parts)
    await wait_until(lambda: len(noticed.kinds) >= 3, timeout=20)
    assert noticed.kinds[:3] == ["arrived", "left", "returned"]
    left, returned = noticed.events[1:3]
    # away from the last face seen (the end of the first scene) to the face seen again: 12 s of the story
    assert returned.away_s == pytest.approx(12 / FAST, abs=0.75)
    assert returned.at - left.at < returned.away_s  # "left" came only after a while without a face


def test_an_empty_room_with_noise_and_the_light_dimmed_and_up_again_stays_quiet(tmp_path: Path) -> None:
    """A minute of an empty room at 2 frames a second, read with OpenCV: the sensor's noise (twice as much for a
    while), a lamp dimmed to half and up again, the sun behind a cloud; the detector notices nothing."""
    story = [Scene(8), Scene(6, light_to=0.5), Scene(10, light=0.5), Scene(6, light=0.5, light_to=1.0),
             Scene(15, noise=2.0), Scene(2, light_to=0.7), Scene(13, light=0.7)]
    video = write_room_video(tmp_path / "empty.avi", story, fps=2, seed=7)
    detector = PresenceDetector()
    capture = cv2.VideoCapture(str(video))
    events, frames = [], 0
    try:
        while True:
            ok, image = capture.read()
            if not ok:
                break
            events += detector.see(np.asarray(image, dtype=np.uint8), frames / 2.0)
            frames += 1
    finally:
        capture.release()
    assert frames == 120
    assert events == []
    assert detector.counted < frames / 4  # a room that does not change is not searched for faces again and again


async def test_watching_reads_a_few_frames_a_second_says_so_and_the_camera_switch_stops_it(
        tmp_path: Path, bus: InProcessBus, watched: tuple[Noticed, list[OpenCVCamera | PresenceWatcher]]) -> None:
    noticed, parts = watched
    video = write_test_video(tmp_path / "webcam.avi", frames=60, fps=30.0)  # a 30 fps webcam
    camera, watcher = await watch(video, bus, parts, fps=2.0)
    await wait_until(lambda: watcher.frames_read >= 4, timeout=10)
    assert watcher.watching
    assert noticed.watching == [True]
    assert camera.in_use
    assert camera.holders == ["notice"]
    # Two frames a second are decoded for it, not thirty.
    loop = asyncio.get_running_loop()
    decoded, began = camera.stats.frames_read, loop.time()
    await wait_until(lambda: watcher.frames_read >= 7, timeout=10)
    assert camera.stats.frames_read - decoded <= 2 * (loop.time() - began) + 1
    assert watcher.frames_read >= 7  # and each of them read

    await camera.switch(False)  # the status bar's switch
    await wait_until(lambda: not watcher.watching)
    await wait_until(lambda: len(noticed.watching) >= 2)  # (the bus delivers it to the test's subscriber after)
    assert noticed.watching == [True, False]
    assert not camera.in_use
    read = watcher.frames_read
    await camera.switch(True)
    await wait_until(lambda: watcher.watching and watcher.frames_read > read)
    await wait_until(lambda: len(noticed.watching) >= 3)
    assert noticed.watching == [True, False, True]


async def test_noticing_is_off_until_turned_on_and_then_follows_the_setting(tmp_path: Path, bus: InProcessBus) -> None:
    video = write_test_video(tmp_path / "webcam.avi", frames=30)
    assert not Settings().camera.notice
    assert load_settings({"MADOI_NOTICE": "true", "MADOI_HOME": str(tmp_path)}).settings.camera.notice
    settings = Settings.model_validate({"camera": {"source": str(video)}})
    devices = build_devices(settings, bus, speech_dir=tmp_path / "speech")
    assert devices.presence is not None
    for component in devices.components:
        await component.start()
    try:
        camera, presence = devices.camera, devices.presence
        assert camera.holders == []
        assert camera.stats.opened == 0
        settings.camera.notice = True
        await devices.apply_settings(settings)
        await wait_until(lambda: presence.watching, timeout=10)
        assert camera.holders == ["notice"]
        settings.camera.notice = False
        await devices.apply_settings(settings)
        assert not presence.watching
        assert camera.holders == []
    finally:
        for component in reversed(devices.components):
            await component.stop()
