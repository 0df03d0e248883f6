"""The OpenCV camera adapter: one worker thread grabs frames continuously; queries take the latest one.

The source is a device index ("0"), a video file (looped at its own frame rate, so a file stands in for a
webcam) or a stream URL; "none" turns the camera off. The capture is opened once, not per query. When it cannot
be opened or stops delivering frames, :attr:`OpenCVCamera.status` says "no camera: <reason>", a
:class:`DeviceStatus` is published on the bus, and the worker keeps retrying every ``retry_s`` (so a camera
plugged in later, or a new source from :meth:`OpenCVCamera.reconfigure`, is picked up).

JPEG encoding and the on-device description run in an executor thread when asked for, never on the loop and
never for frames nobody asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from app.devices.vision_description import Image, describe_frame
from companions.bus import Bus
from companions.devices import CameraFrame, DeviceStatus, DeviceUnavailable

log = logging.getLogger(__name__)

DEFAULT_FPS: Final = 30.0
DISABLED_SOURCES: Final = frozenset({"", "none", "off"})


@dataclass(frozen=True)
class _Grab:
    image: Image
    timestamp: float
    seq: int


def parse_source(source: str) -> int | str | None:
    """A device index, a file path or URL, or None when the camera is turned off."""
    text = source.strip()
    if text.lower() in DISABLED_SOURCES:
        return None
    if text.isdigit():
        return int(text)
    return text


def encode_jpeg(image: Image, quality: int = 80) -> bytes:
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buffer.tobytes()


class OpenCVCamera:
    """A runtime Component and the :class:`companions.devices.Camera` adapter."""

    name = "camera"

    def __init__(self, source: str, bus: Bus | None = None, *, jpeg_quality: int = 80, retry_s: float = 2.0,
                 first_frame_timeout_s: float = 3.0) -> None:
        self._source = source
        self._bus = bus
        self._jpeg_quality = jpeg_quality
        self._retry_s = retry_s
        self._first_frame_timeout_s = first_frame_timeout_s
        self._lock = threading.Lock()
        self._latest: _Grab | None = None
        self._frame_period = 1.0 / DEFAULT_FPS
        self._status = DeviceStatus("camera", False, "no camera: not started", source)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._frame_waiters: set[asyncio.Future[None]] = set()
        self._encoded: tuple[int, bytes] | None = None
        self._preview: tuple[int, int, CameraFrame] | None = None
        self._last_look: Image | None = None
        self._describe_lock = threading.Lock()
        self._opening = False  # between start() and the first frame or the first failure

    # -- Component ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self._thread is not None:
            return
        if parse_source(self._source) is None:
            self._set_status(False, "no camera: turned off in the settings")
            return
        self._stop = threading.Event()
        self._opening = True
        self._thread = threading.Thread(target=self._run, args=(self._source, self._stop), name="camera-grabber",
                                        daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None:
            # Bounded below the runtime's per-component stop budget; a read blocked on a dead stream is left to
            # finish on its own (the thread is a daemon and drops its frame once it sees the stop flag).
            await asyncio.to_thread(thread.join, 1.0)
            if thread.is_alive():
                log.warning("camera thread did not stop within 1 s (a blocked read); left to finish")
        with self._lock:
            self._latest = None
            self._encoded = None
            self._preview = None
        self._last_look = None

    async def reconfigure(self, source: str) -> None:
        """Switches to ``source`` (from changed settings) and checks it again."""
        await self.stop()
        self._source = source
        await self.start()

    # -- Camera port -------------------------------------------------------------------------------------------

    @property
    def status(self) -> DeviceStatus:
        return self._status

    @property
    def source(self) -> str:
        return self._source

    @property
    def frame_period(self) -> float:
        return self._frame_period

    async def capture(self, *, describe: bool = False) -> CameraFrame:
        grab = await self._latest_grab()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self._encode, grab, describe)

    async def preview(self, max_width: int = 320) -> CameraFrame | None:
        """A small JPEG of the latest frame for the UI, or None while there is none.

        Throttled by nature: the same frame is encoded once per size however often the UI asks.
        """
        with self._lock:
            grab = self._latest
            cached = self._preview
        if grab is None:
            return None
        if cached is not None and cached[0] == grab.seq and cached[1] == max_width:
            return cached[2]
        frame = await asyncio.get_running_loop().run_in_executor(None, self._encode_preview, grab, max_width)
        with self._lock:
            self._preview = (grab.seq, max_width, frame)
        return frame

    # -- internals ---------------------------------------------------------------------------------------------

    async def _latest_grab(self) -> _Grab:
        with self._lock:
            grab = self._latest
        if grab is not None and self._status.available:
            return grab
        if self._thread is None or not self._opening:
            raise DeviceUnavailable(self._status.reason)
        # Just started: wait for the first frame (bounded), woken by the grabber thread.
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._frame_waiters.add(waiter)
        try:
            async with asyncio.timeout(self._first_frame_timeout_s):
                await waiter
        except TimeoutError:
            raise DeviceUnavailable(f"no camera: no frame within {self._first_frame_timeout_s:g} s") from None
        finally:
            self._frame_waiters.discard(waiter)
        with self._lock:
            grab = self._latest
        if grab is None:
            raise DeviceUnavailable(self._status.reason)
        return grab

    def _encode(self, grab: _Grab, describe: bool) -> CameraFrame:
        with self._lock:
            cached = self._encoded
        if cached is not None and cached[0] == grab.seq:
            jpeg = cached[1]
        else:
            jpeg = encode_jpeg(grab.image, self._jpeg_quality)
            with self._lock:
                self._encoded = (grab.seq, jpeg)
        description = None
        if describe:
            with self._describe_lock:  # "since the last look" needs the looks in order
                description, self._last_look = describe_frame(grab.image, self._last_look)
        height, width = grab.image.shape[:2]
        return CameraFrame(jpeg=jpeg, width=width, height=height, timestamp=grab.timestamp, description=description)

    def _encode_preview(self, grab: _Grab, max_width: int) -> CameraFrame:
        height, width = grab.image.shape[:2]
        image = grab.image
        if width > max_width:
            height = max(1, round(height * max_width / width))
            width = max_width
            image = np.asarray(cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA), dtype=np.uint8)
        return CameraFrame(jpeg=encode_jpeg(image, 70), width=width, height=height, timestamp=grab.timestamp)

    def _set_status(self, available: bool, reason: str) -> None:
        """Called from the grabber thread too: only assigns an immutable value and publishes (thread-safe)."""
        self._opening = False
        previous = self._status
        status = DeviceStatus("camera", available, reason, self._source)
        if previous == status:
            return
        self._status = status
        if available:
            log.info("camera %r: available", self._source)
        else:
            log.warning("camera %r: %s", self._source, reason)
        loop = self._loop
        if self._bus is not None and loop is not None and not loop.is_closed():
            # Via the loop: the bus may not be bound yet when the grabber thread reports.
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(self._bus.publish, status)
        if not available:
            self._wake_waiters()

    def _wake_waiters(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed() or not self._frame_waiters:
            return

        def wake() -> None:
            for waiter in list(self._frame_waiters):
                if not waiter.done():
                    waiter.set_result(None)

        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(wake)

    def _open(self, source: str) -> tuple[cv2.VideoCapture, bool] | str:
        parsed = parse_source(source)
        if parsed is None:
            return "no camera: turned off in the settings"
        if isinstance(parsed, int) and sys.platform.startswith("linux") and not os.path.exists(f"/dev/video{parsed}"):
            # Checked first so that retrying every few seconds does not make OpenCV warn on stderr each time.
            return f"no camera: no video device /dev/video{parsed}"
        is_file = isinstance(parsed, str) and "://" not in parsed
        if is_file and not os.path.isfile(str(parsed)):
            return f"no camera: no such device or video file {source!r}"
        capture = cv2.VideoCapture(parsed)
        if not capture.isOpened():
            capture.release()
            return f"no camera: cannot open {source!r}"
        return capture, is_file

    def _run(self, source: str, stop: threading.Event) -> None:
        seq = 0
        while not stop.is_set():
            opened = self._open(source)
            if isinstance(opened, str):
                self._set_status(False, opened)
                stop.wait(self._retry_s)
                continue
            capture, is_file = opened
            fps = capture.get(cv2.CAP_PROP_FPS)
            self._frame_period = 1.0 / fps if 1.0 <= fps <= 240.0 else 1.0 / DEFAULT_FPS
            try:
                seq = self._grab_until_failure(capture, is_file, stop, seq)
            finally:
                capture.release()
            if not stop.is_set():
                stop.wait(self._retry_s)

    def _grab_until_failure(self, capture: cv2.VideoCapture, is_file: bool, stop: threading.Event, seq: int) -> int:
        period = self._frame_period
        next_due = time.monotonic()
        while not stop.is_set():
            ok, image = capture.read()
            if not ok and is_file:  # end of the file: loop it
                capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
                ok, image = capture.read()
            if not ok or image is None:
                self._set_status(False, "no camera: the source stopped delivering frames")
                return seq
            seq += 1
            with self._lock:
                self._latest = _Grab(np.asarray(image, dtype=np.uint8), time.time(), seq)
            if not self._status.available:
                self._set_status(True, "")
            self._wake_waiters()
            if is_file:  # a file is read as fast as the disk allows: pace it like a camera
                next_due += period
                delay = next_due - time.monotonic()
                if delay > 0:
                    stop.wait(delay)
                else:
                    next_due = time.monotonic()
        return seq


def build_camera(source: str, bus: Bus | None) -> OpenCVCamera:
    """The camera for ``settings.camera.source`` (``"none"`` gives a camera whose status says it is off)."""
    return OpenCVCamera(source, bus)
