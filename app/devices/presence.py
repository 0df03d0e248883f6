"""Noticing: who is in front of the camera, watched on this computer a few small frames a second, with consent.

"Let them notice you" (``[camera] notice``, ``MADOI_NOTICE=true``) is off by default. While it is on (and the
user's camera switch is on), :class:`PresenceWatcher` *holds* the camera the looks use (``app/devices/camera.py``;
the device is never opened twice) asking for at most :data:`NOTICE_FPS` frames a second, so the webcam's light and
the status bar's switch say it is open, and :class:`~companions.devices.presence.PresenceWatching` says it watches.
The camera switch turns it all off: the camera closes and delivers nothing, and watching stops until it is on again.

Each new frame is made small and grey (``vision_description.small_gray``, 320 px wide) and read by
:class:`PresenceDetector` in an executor thread: the faces (OpenCV's Haar cascade, ``faces.py``), the light, and
how much of the picture differs from the room as it was. What it notices goes on the bus as
:class:`~companions.devices.presence.PresenceNoticed`: someone arriving, leaving, coming back after a while, a
second person, something held up close, the light going out. Each event carries the frame that showed it (a JPEG,
encoded only for a frame with an event), for this window's chat to show on a click as it shows a look's
(``ui/chat/looks.py``): the event is a local one on the in-process bus (``events``), which is never forwarded to the
network or a bridge client, and no model is given it. Nothing is kept here but the detector's small state; no picture
or description leaves the machine.

Each event waits for its sign in consecutive frames (:class:`NoticeTimes`), so that a face seen once in noise or
a lamp turned down is not a person; ``bench/presence.py`` measures the latency, the false events in an empty room
and the CPU it costs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import cv2
import numpy as np
import numpy.typing as npt

from app.devices.camera import encode_jpeg
from app.devices.faces import Box, face_boxes
from app.devices.vision_description import Image, small_gray
from companions.devices.presence import PresenceKind, PresenceNoticed, PresenceWatching

if TYPE_CHECKING:
    from app.devices.camera import OpenCVCamera
    from companions.wire.bus import Bus

log = logging.getLogger(__name__)

NOTICE_FPS: Final = 2.0  # frames a second read while watching (the camera decodes no more for it)
# The picture as the detector compares it: tiny and grey, each pixel scaled by the picture's mean (a lamp turned up
# or down scales every pixel alike and so changes nothing).
TINY_SIZE: Final = (80, 60)
CHANGE_DELTA: Final = 30.0  # a tiny pixel changed when it differs by more than this (of a mean-scaled 128)
MOVED_SHARE: Final = 0.01  # faces are looked for again once this share of the picture changed since the last count
RECOUNT_S: Final = 10.0  # and at least this often
# Faces are searched in a 240 px wide picture, 1.2 times larger at each try: 12 ms a search (320 px and 1.1 as a look's
# description does: 28 ms; both found the tests' faces and none in the empty room). A face of 24 px in it is 64 px
# of a 640 px webcam picture: someone within about 1.5 m of the camera.
FACE_WIDTH: Final = 240
FACE_SCALE_FACTOR: Final = 1.2
ROOM_ALPHA: Final = 0.05  # per frame, the room follows the picture: at 2 fps it takes about 10 s to follow a change
DARK_LEVEL: Final = 35.0  # mean grey below this: the light is out
LIT_LEVEL: Final = 60.0  # and above this: it is on (a light going out is a fall from at least this)
JPEG_QUALITY: Final = 80  # the picture of a frame that showed an event, as a look's (app/devices/camera.py)
GAP_S: Final = 3.0  # frames further apart than this (the camera switched off, a stall) do not count as absence


@dataclass(frozen=True)
class NoticeTimes:
    """How long a sign must last before it is an event (in frames read, or seconds)."""

    arrive_frames: int = 2  # frames in a row with a face: someone arrived
    leave_s: float = 10.0  # no face this long: they left
    return_after_s: float = 60.0  # back after at least this long away: "returned" (sooner: "arrived" again)
    second_frames: int = 2  # frames in a row with two faces or more: a second person
    held_frames: int = 2  # frames in a row with a large change beside the person: something held up
    held_share: float = 0.2  # that change covers at least this share of the picture
    settle_frames: int = 20  # frames after someone arrived before the room has taken them in (ROOM_ALPHA)
    dark_frames: int = 2  # frames in a row under DARK_LEVEL: the light went out


def _tiny(gray: Image, mean: float) -> npt.NDArray[np.float32]:
    tiny = cv2.resize(gray, TINY_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)
    return tiny * np.float32(128.0 / max(mean, 1.0))


def _changed(tiny: npt.NDArray[np.float32], other: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    return np.asarray(np.abs(tiny - other) > CHANGE_DELTA)


class PresenceDetector:
    """Frames in, events out; the state of who is there. Not thread-safe: one frame at a time, in order."""

    def __init__(self, times: NoticeTimes | None = None) -> None:
        self.times = times or NoticeTimes()
        self.present = False
        self.people = 0
        self.dark = False
        self.counted = 0  # frames whose faces were looked for (the rest changed too little since)
        self._faces_in_row = 0
        self._two_in_row = 0
        self._held_in_row = 0
        self._present_frames = 0  # frames read since they arrived
        self._dark_in_row = 0
        self._lit = False  # the light was on (so that a dark room at the start is no "light went out")
        self._several = False
        self._held = False
        self._last_at: float | None = None
        self._last_face_at = 0.0
        self._last_two_at = 0.0
        self._left_at: float | None = None
        self._faces: list[Box] = []  # the faces last counted
        self._person: list[Box] = []  # where the last faces seen were (their person is not "held up")
        self._counted: tuple[npt.NDArray[np.float32], float] | None = None  # the picture when faces were counted
        self._room: npt.NDArray[np.float32] | None = None

    def see(self, frame_bgr: Image, at: float) -> list[PresenceNoticed]:
        """Reads one frame grabbed at ``at`` (wall-clock seconds); returns what it noticed."""
        gray = small_gray(frame_bgr)
        events: list[PresenceNoticed] = []
        if self._last_at is not None and at - self._last_at > GAP_S and self.present:
            self._last_face_at = at  # not watched meanwhile: nobody is known to have left
        self._last_at = at
        mean = float(gray.mean())
        if self._see_light(mean, at, events):
            return events  # in the dark nothing else can be told
        tiny = _tiny(gray, mean)
        faces = self._count_faces(gray, tiny, at)
        self._see_people(faces, at, events)
        self._see_held_up(tiny, (gray.shape[1], gray.shape[0]), at, events)
        return events

    def _count_faces(self, gray: Image, tiny: npt.NDArray[np.float32], at: float) -> list[Box]:
        """The faces in ``gray``: looked for (the costly part) only when the picture changed since they were last
        counted, or that was a while ago; else the same as then."""
        counted = self._counted
        if counted is not None and at - counted[1] < RECOUNT_S and _changed(tiny, counted[0]).mean() < MOVED_SHARE:
            return self._faces
        self.counted += 1
        self._counted = (tiny, at)
        height, width = gray.shape[:2]
        scale = min(1.0, FACE_WIDTH / width)
        small = cv2.resize(gray, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
        found = face_boxes(np.asarray(small, dtype=np.uint8), scale_factor=FACE_SCALE_FACTOR) or []
        self._faces = [(round(x / scale), round(y / scale), round(w / scale), round(h / scale)) for x, y, w, h in found]
        return self._faces

    def _event(self, kind: PresenceKind, at: float, away_s: float = 0.0) -> PresenceNoticed:
        log.info("noticed: %s (%d people%s)", kind, self.people, f", away {away_s:.0f} s" if away_s else "")
        return PresenceNoticed(kind, at, self.people, away_s)

    def _see_light(self, mean: float, at: float, events: list[PresenceNoticed]) -> bool:
        """True while it is dark."""
        if mean < DARK_LEVEL:
            self._dark_in_row += 1
            if not self.dark and self._lit and self._dark_in_row >= self.times.dark_frames:
                self.dark = True
                events.append(self._event("dark", at))
        else:
            self._dark_in_row = 0
            if mean >= LIT_LEVEL:
                self._lit = True
                if self.dark:
                    self.dark = False
                    self._room = self._counted = None  # the room is seen afresh
                    if self.present:
                        self._last_face_at = at  # not seen in the dark, not gone
        return self.dark or self._dark_in_row > 0

    def _see_people(self, faces: list[Box], at: float, events: list[PresenceNoticed]) -> None:
        times = self.times
        count = len(faces)
        self._faces_in_row = self._faces_in_row + 1 if count else 0
        self._two_in_row = self._two_in_row + 1 if count >= 2 else 0
        if count:
            self._last_face_at = at
            self._person = faces
        if count >= 2:
            self._last_two_at = at
        if not self.present:
            if self._faces_in_row >= times.arrive_frames:
                self.present = True
                self.people = count
                self._several = count >= 2
                away = at - self._left_at if self._left_at is not None else 0.0
                returned = self._left_at is not None and away >= times.return_after_s
                events.append(self._event("returned" if returned else "arrived", at, away if returned else 0.0))
            return
        if count:
            self.people = count
        elif at - self._last_face_at >= times.leave_s:
            self.present = False
            self.people = 0
            self._several = False
            self._person = []
            self._left_at = self._last_face_at
            events.append(self._event("left", at))
            return
        if not self._several and self._two_in_row >= times.second_frames:
            self._several = True
            events.append(self._event("second_person", at))
        elif self._several and at - self._last_two_at >= times.leave_s:
            self._several = False  # one of them went: a second person may be noticed again

    def _see_held_up(self, tiny: npt.NDArray[np.float32], size: tuple[int, int], at: float,
                     events: list[PresenceNoticed]) -> None:
        """Something held up close: a large part of the picture, beside the person's head and body, differs from
        the room, frame after frame, while someone is there (and has been for a while: the room takes them in)."""
        room = self._room
        if room is None:
            self._room = tiny
            return
        changed = _changed(tiny, room)
        scale_x, scale_y = TINY_SIZE[0] / size[0], TINY_SIZE[1] / size[1]
        for x, y, w, h in self._person if self.present else []:
            # Their head and body, where the face last was: a quarter of a face either side, down to the bottom.
            top, left, right = int((y - h / 4) * scale_y), int((x - w / 4) * scale_x), int((x + w * 1.25) * scale_x)
            changed[max(0, top):, max(0, left):max(0, right)] = False
        share = float(changed.mean())
        self._present_frames = self._present_frames + 1 if self.present else 0
        if self._present_frames > self.times.settle_frames and share >= self.times.held_share:
            self._held_in_row += 1
            self._last_face_at = at  # a face hidden behind what they hold up is still theirs
            if not self._held and self._held_in_row >= self.times.held_frames:
                self._held = True
                events.append(self._event("held_up", at))
        else:
            self._held_in_row = 0
            if share < self.times.held_share / 3:
                self._held = False
        if not self._held_in_row:  # the room follows the picture, but not what is held up in front of it
            cv2.accumulateWeighted(tiny, room, ROOM_ALPHA)


class PresenceWatcher:
    """A runtime component: watches through ``camera`` while noticing is on (:meth:`set_on`) and publishes what
    it noticed on ``bus``."""

    name = "presence"

    def __init__(self, camera: OpenCVCamera, bus: Bus | None, *, on: bool = False, fps: float = NOTICE_FPS,
                 times: NoticeTimes | None = None) -> None:
        self.camera = camera
        self._bus = bus
        self._on = on
        self.fps = fps
        self._times = times
        self.detector = PresenceDetector(times)
        self.frames_read = 0  # frames the detector read, for tests and the benchmark
        self._task: asyncio.Task[None] | None = None
        self._started = False
        self._watching = False

    @property
    def on(self) -> bool:
        """Noticing is turned on (the setting)."""
        return self._on

    @property
    def watching(self) -> bool:
        """Frames come in and are read now (on, started, the camera switched on and delivering)."""
        return self._watching

    async def start(self) -> None:
        self._started = True
        self._follow()

    async def stop(self) -> None:
        self._started = False
        await self._stop_task()

    async def set_on(self, on: bool) -> None:
        """The setting: on watches from now on, off stops watching and lets the camera go."""
        if on == self._on:
            return
        self._on = on
        log.info("noticing turned %s", "on" if on else "off")
        if on:
            self.detector = PresenceDetector(self._times)  # a new watch starts with nobody known to be there
            self._follow()
        else:
            await self._stop_task()

    def _follow(self) -> None:
        if self._on and self._started and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch(), name="presence-watch")

    async def _stop_task(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _set_watching(self, watching: bool) -> None:
        if watching != self._watching:
            self._watching = watching
            log.info("noticing: %s", "watching" if watching else "not watching")
            if self._bus is not None:
                self._bus.publish(PresenceWatching(watching))

    def _see(self, frame_bgr: Image, at: float) -> list[PresenceNoticed]:
        """What the detector noticed in one frame, each event with the frame as a JPEG (encoded only for a frame with
        an event, which is rare: not for every frame read). In the executor."""
        events = self.detector.see(frame_bgr, at)
        if not events:
            return events
        height, width = frame_bgr.shape[:2]
        try:
            jpeg = encode_jpeg(frame_bgr, JPEG_QUALITY)
        except Exception:  # the event still counts without its picture
            log.exception("noticing: the frame could not be encoded")
            return events
        return [dataclasses.replace(event, jpeg=jpeg, width=width, height=height) for event in events]

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        hold = self.camera.hold("notice", fps=self.fps)
        period = 1.0 / self.fps
        seen, read_at = -1, -math.inf
        try:
            while True:
                # Looks for a new frame four times a period (a frame is read soon after the camera kept it), reads
                # one a period at most (the preview may have the camera keep every frame).
                await asyncio.sleep(period / 4)
                grab = self.camera.latest() if self.camera.switched_on else None
                self._set_watching(grab is not None)
                if grab is None or grab.seq == seen or grab.timestamp - read_at < period * 0.9:
                    continue
                seen, read_at = grab.seq, grab.timestamp
                events = await loop.run_in_executor(None, self._see, grab.image, grab.timestamp)
                self.frames_read += 1
                for event in events:
                    if self._bus is not None:
                        self._bus.publish(event)
        except Exception:
            log.exception("noticing failed; it stops until turned on again")
        finally:
            hold.release()
            self._set_watching(False)
