"""The OpenCV camera adapter: the device is open only while it is used, and every look is shown.

The source is a device index ("0"), a video file (looped at its own frame rate, so a file stands in for a
webcam) or a stream URL; "none" turns the camera off in the settings.

**Open only when needed.** Whoever needs frames *holds* the camera (:meth:`OpenCVCamera.hold`): the Camera panel
while it is on screen, and each look (:meth:`OpenCVCamera.capture`) while it takes its frame. The first hold starts
a worker thread that opens the device and grabs frames continuously (queries take the latest one); once the last
hold is released, the device is closed after ``linger_s`` (a conversation that looks twice in a row does not
blink the webcam's light). A hold may want only a few frames a second (``hold(purpose, fps=2)``: noticing,
``app/devices/presence.py``): while only such holds are there, a device's frames are taken off it but decoded only
that often, and a file follows its timeline without decoding every frame (a Motion-JPEG file, as a webcam's
stand-in is, gives its frames as packets and only those kept are decoded; other files jump). :class:`CameraInUse`
on the bus says when the device is open. Without holds nothing touches the device: at start and after a new source
only a cheap check runs (does ``/dev/videoN`` or the file exist?), so :attr:`OpenCVCamera.status` names a missing
camera without opening one.

When the device cannot be opened or stops delivering frames while held, :attr:`OpenCVCamera.status` says "no
camera: <reason>", a :class:`DeviceStatus` is published on the bus, and the worker keeps retrying every
``retry_s`` while someone holds it (a camera plugged in later, or a new source from :meth:`reconfigure`, is
picked up). Two workers never hold the device at once: a new one waits for the previous one to let it go.

**The user's switch.** :meth:`OpenCVCamera.switch` turns looking off for everyone (the status bar's camera
switch, ``[camera] on`` in the settings): the device is closed at once, a look is refused with "the user turned
the camera off" without a frame being read, and the preview says why.

**Every look is shown.** Each :meth:`capture` publishes a :class:`CameraLooked` (who looked, when, the picture;
or why it was refused); the adapter keeps no pictures of its own.

JPEG encoding and the on-device description run in an executor thread when asked for, never on the loop and
never for frames nobody asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from app.devices.vision_description import Image, describe_frame
from companions.devices.ports import CameraFrame, CameraInUse, CameraLooked, DeviceStatus, DeviceUnavailable
from companions.wire.bus import Bus

log = logging.getLogger(__name__)

DEFAULT_FPS: Final = 30.0
DISABLED_SOURCES: Final = frozenset({"", "none", "off"})
LINGER_S: Final = 2.0  # the device stays open this long after its last use
# A look at a closed camera waits this long for the device to open and deliver: on Linux a webcam's first frame
# takes a few hundred ms, some USB cameras ~3 s; below the vision tool's 10 s query timeout
# (companions/tools/builtins.py).
FIRST_FRAME_TIMEOUT_S: Final = 8.0
SWITCHED_OFF: Final = "no camera: the user turned the camera off"
SETTINGS_OFF: Final = "no camera: turned off in the settings"
SPARSE_RECHECK_S: Final = 0.1  # a file waiting for a sparse hold's next frame looks again this often for new holds


@dataclass(frozen=True)
class Grab:
    """A frame as the grabber keeps it: the image (BGR; shared, never to be written to), when it was grabbed
    (``time.time()``) and its number (a new frame has a higher one)."""

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


def missing_reason(source: str) -> str | None:
    """Why ``source`` cannot be a camera, found without opening anything; None when it may be one."""
    parsed = parse_source(source)
    if parsed is None:
        return SETTINGS_OFF
    if isinstance(parsed, int) and sys.platform.startswith("linux") and not os.path.exists(f"/dev/video{parsed}"):
        # Checked first so that retrying every few seconds does not make OpenCV warn on stderr each time.
        return f"no camera: no video device /dev/video{parsed}"
    if isinstance(parsed, str) and "://" not in parsed and not os.path.isfile(parsed):
        return f"no camera: no such device or video file {source!r}"
    return None


class CameraHold:
    """One use of the camera (the preview on screen, a look): the device stays open until every hold is released.
    :meth:`release` is idempotent."""

    def __init__(self, camera: OpenCVCamera, token: int, purpose: str) -> None:
        self._camera = camera
        self._token = token
        self.purpose = purpose
        self.released = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self._camera._release(self._token)


@dataclass
class CameraStats:
    """What the device went through, for tests and benchmarks."""

    opened: int = 0  # times the device (or file) was opened
    closed: int = 0
    frames_read: int = 0  # frames read from the device


class OpenCVCamera:
    """A runtime Component and the :class:`companions.devices.ports.Camera` adapter."""

    name = "camera"

    def __init__(self, source: str, bus: Bus | None = None, *, jpeg_quality: int = 80, retry_s: float = 2.0,
                 first_frame_timeout_s: float = FIRST_FRAME_TIMEOUT_S, linger_s: float = LINGER_S,
                 switched_on: bool = True) -> None:
        self._source = source
        self._bus = bus
        self._jpeg_quality = jpeg_quality
        self._retry_s = retry_s
        self._first_frame_timeout_s = first_frame_timeout_s
        self.linger_s = linger_s
        self._switched_on = switched_on
        self.stats = CameraStats()
        self._lock = threading.Lock()
        self._latest: Grab | None = None
        self._frame_period = 1.0 / DEFAULT_FPS
        self._status = DeviceStatus("camera", False, "no camera: not started", source)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous: threading.Thread | None = None  # a worker told to stop that may still hold the device
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._frame_waiters: set[asyncio.Future[None]] = set()
        self._encoded: tuple[int, bytes] | None = None
        self._preview: tuple[int, int, CameraFrame] | None = None
        self._last_look: Image | None = None
        self._describe_lock = threading.Lock()
        self._opening = False  # between a worker's start and its first frame or first failure
        self._in_use = False  # the device is open (set by the worker thread)
        self._holds: dict[int, str] = {}
        self._sparse_holds: dict[int, float] = {}  # holds that want a frame only every so many seconds
        self._sparse_period = 0.0  # > 0 while only those hold the camera: read by the grabber thread
        self._tokens = itertools.count(1)
        self._closing: asyncio.TimerHandle | None = None
        self._started = False

    # -- Component ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        if self._started:
            return
        self._started = True
        self._check()
        self._open_if_held()

    async def stop(self) -> None:
        self._started = False
        self._cancel_closing()
        self._stop_worker()
        await self._join_previous()
        self._last_look = None

    async def reconfigure(self, source: str) -> None:
        """Switches to ``source`` (from changed settings) and checks it again (opened again if someone holds it)."""
        was_started = self._started
        await self.stop()
        self._source = source
        if was_started:
            await self.start()

    async def switch(self, on: bool) -> None:
        """The user's camera switch: off closes the device at once and refuses every look until it is on again."""
        if on == self._switched_on:
            return
        self._switched_on = on
        log.info("camera switched %s by the user", "on" if on else "off")
        if self._started:
            self._check()  # first: a look waiting for its frame is told why it gets none
        if not on:
            self._cancel_closing()
            self._stop_worker()
            await self._join_previous()
        elif self._started:
            self._open_if_held()

    # -- holding the device --------------------------------------------------------------------------------------

    def hold(self, purpose: str, *, fps: float | None = None) -> CameraHold:
        """Keeps the device open for ``purpose`` (e.g. "preview") until the hold is released; opens it now when it
        was closed (unless the camera is switched or turned off: then the hold only waits). ``fps``: the hold needs
        at most that many new frames a second (None: every frame)."""
        if fps is not None and fps <= 0:
            raise ValueError("fps must be positive")
        token = next(self._tokens)
        self._holds[token] = purpose
        if fps is not None:
            self._sparse_holds[token] = 1.0 / fps
        self._update_sparse()
        self._cancel_closing()
        self._open_if_held()
        return CameraHold(self, token, purpose)

    def _update_sparse(self) -> None:
        """0 while a hold wants every frame, else the shortest period the sparse holds want."""
        every = any(token not in self._sparse_holds for token in self._holds)
        self._sparse_period = 0.0 if every or not self._holds else min(self._sparse_holds.values())

    def _release(self, token: int) -> None:
        self._holds.pop(token, None)
        self._sparse_holds.pop(token, None)
        self._update_sparse()
        if self._holds or self._thread is None:
            return
        self._cancel_closing()
        loop = self._loop
        if self.linger_s <= 0 or loop is None or loop.is_closed():
            self._close_idle()
        else:
            self._closing = loop.call_later(self.linger_s, self._close_idle)

    def _close_idle(self) -> None:
        self._closing = None
        if not self._holds:
            self._stop_worker()

    def _cancel_closing(self) -> None:
        if self._closing is not None:
            self._closing.cancel()
            self._closing = None

    def _open_if_held(self) -> None:
        if not self._holds or self._thread is not None or not self._started or not self._switched_on:
            return
        if parse_source(self._source) is None:
            return
        self._stop = threading.Event()
        self._opening = True
        self._thread = threading.Thread(target=self._run, args=(self._source, self._stop, self._previous),
                                        name="camera-grabber", daemon=True)
        self._previous = None
        self._thread.start()

    def _stop_worker(self) -> None:
        """Tells the worker to let the device go (it releases it on its own thread) and forgets its frames."""
        thread, self._thread = self._thread, None
        with self._lock:
            self._stop.set()
            self._latest = None
            self._encoded = None
            self._preview = None
        if thread is not None:
            self._previous = thread
        self._opening = False
        self._wake_waiters()

    async def _join_previous(self) -> None:
        thread = self._previous
        if thread is None:
            return
        # Bounded below the runtime's per-component stop budget; a read blocked on a dead stream is left to
        # finish on its own (the thread is a daemon and drops its frame once it sees the stop flag).
        await asyncio.to_thread(thread.join, 1.0)
        if thread.is_alive():
            log.warning("camera thread did not stop within 1 s (a blocked read); left to finish")
        elif self._previous is thread:
            self._previous = None

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

    @property
    def switched_on(self) -> bool:
        """The user's camera switch (off: nobody looks)."""
        return self._switched_on

    @property
    def in_use(self) -> bool:
        """True while the device is open."""
        return self._in_use

    def latest(self) -> Grab | None:
        """The latest frame itself, for analysis on this computer that needs no JPEG (noticing); None while the
        device is closed or has not delivered yet. Nothing is published: this is not a look."""
        with self._lock:
            return self._latest

    @property
    def holders(self) -> list[str]:
        """What holds the camera now ("preview", "look:<who>")."""
        return list(self._holds.values())

    async def capture(self, *, describe: bool = False, looker: str = "") -> CameraFrame:
        if not self._switched_on:
            self._publish(CameraLooked(looker, time.time(), refused=SWITCHED_OFF))
            raise DeviceUnavailable(SWITCHED_OFF)
        hold = self.hold(f"look:{looker}")
        try:
            grab = await self._latest_grab()
            frame = await asyncio.get_running_loop().run_in_executor(None, self._encode, grab, describe)
        finally:
            hold.release()
        self._publish(CameraLooked(looker, frame.timestamp, frame.jpeg, frame.width, frame.height,
                                   frame.description.summary if frame.description is not None else ""))
        return frame

    async def preview(self, max_width: int = 320) -> CameraFrame | None:
        """A small JPEG of the latest frame for the UI, or None while there is none (hold the camera first).

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
            if self._latest is not None:  # not closed meanwhile
                self._preview = (grab.seq, max_width, frame)
        return frame

    # -- internals ---------------------------------------------------------------------------------------------

    def _check(self) -> None:
        """The status without opening the device: turned off, switched off, missing, or (as far as can be told
        without opening it) there."""
        if not self._switched_on:
            self._set_status(False, SWITCHED_OFF)
            return
        reason = missing_reason(self._source)
        self._set_status(reason is None, reason or "")

    async def _latest_grab(self) -> Grab:
        with self._lock:
            grab = self._latest
        if grab is not None and self._status.available:
            return grab
        if self._thread is None or not self._opening:
            raise DeviceUnavailable(self._status.reason or "no camera: not started")
        # Just opened: wait for the first frame (bounded), woken by the grabber thread.
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
            raise DeviceUnavailable(self._status.reason if not self._status.available
                                    else "no camera: closed while looking")
        return grab

    def _encode(self, grab: Grab, describe: bool) -> CameraFrame:
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

    def _encode_preview(self, grab: Grab, max_width: int) -> CameraFrame:
        height, width = grab.image.shape[:2]
        image = grab.image
        if width > max_width:
            height = max(1, round(height * max_width / width))
            width = max_width
            image = np.asarray(cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA), dtype=np.uint8)
        return CameraFrame(jpeg=encode_jpeg(image, 70), width=width, height=height, timestamp=grab.timestamp)

    def _publish(self, event: DeviceStatus | CameraInUse | CameraLooked) -> None:
        """Thread-safe: from the grabber thread via the loop (the bus may not be bound yet when it reports); on the
        loop at once (a look is published before whatever its caller publishes next)."""
        loop = self._loop
        if self._bus is None or loop is None or loop.is_closed():
            return
        if threading.get_ident() == self._loop_thread:
            self._bus.publish(event)
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(self._bus.publish, event)

    def _set_status(self, available: bool, reason: str) -> None:
        """Called from the grabber thread too: only assigns an immutable value and publishes (thread-safe)."""
        self._opening = False
        status = DeviceStatus("camera", available, reason, self._source)
        if status != self._status:
            self._status = status
            if available:
                log.info("camera %r: available", self._source)
            else:
                log.warning("camera %r: %s", self._source, reason)
            self._publish(status)
        if not available:
            self._wake_waiters()  # a look waiting for the first frame gets the reason at once (set above)

    def _set_in_use(self, in_use: bool) -> None:
        """Called from the grabber thread."""
        self._in_use = in_use
        if in_use:
            self.stats.opened += 1
        else:
            self.stats.closed += 1
        log.info("camera %r: device %s", self._source, "opened" if in_use else "closed")
        self._publish(CameraInUse(in_use))

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

    def _open(self, source: str) -> tuple[cv2.VideoCapture, bool, bool] | str:
        """The opened capture, whether it is a file, and whether its frames come as JPEG packets (decoded here)."""
        reason = missing_reason(source)
        if reason is not None:
            return reason
        parsed = parse_source(source)
        assert parsed is not None
        capture = cv2.VideoCapture(parsed)
        if not capture.isOpened():
            capture.release()
            return f"no camera: cannot open {source!r}"
        is_file = isinstance(parsed, str) and "://" not in parsed
        return capture, is_file, is_file and _jpeg_packets(capture)

    def _run(self, source: str, stop: threading.Event, previous: threading.Thread | None) -> None:
        if previous is not None:
            previous.join()  # the device is let go by the previous worker before this one opens it
        seq = 0
        while not stop.is_set():
            opened = self._open(source)
            if isinstance(opened, str):
                self._set_status(False, opened)
                stop.wait(self._retry_s)
                continue
            capture, is_file, packets = opened
            self._set_in_use(True)
            fps = capture.get(cv2.CAP_PROP_FPS)
            self._frame_period = 1.0 / fps if 1.0 <= fps <= 240.0 else 1.0 / DEFAULT_FPS
            try:
                seq = self._grab_until_failure(capture, is_file, stop, seq, packets=packets)
            finally:
                capture.release()
                self._set_in_use(False)
            if not stop.is_set():
                stop.wait(self._retry_s)

    def _grab_until_failure(self, capture: cv2.VideoCapture, is_file: bool, stop: threading.Event, seq: int, *,
                            packets: bool = False) -> int:
        """Reads frames until stopped or the source fails; ``packets``: a Motion-JPEG file read as its JPEG packets
        (each kept frame decoded here), whose frames between two kept ones are taken off it undecoded."""
        period = self._frame_period
        frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) if is_file else 0
        index = -1  # a file's frame read last
        next_due = time.monotonic()
        origin: float | None = None  # a file read for sparse holds only: when its frame 0 played
        kept_at = -math.inf  # when a frame was last kept
        while not stop.is_set():
            sparse = self._sparse_period
            now = time.monotonic()
            if sparse and now < kept_at + sparse:  # only sparse holds, and none needs a new frame yet
                if is_file:  # nothing is decoded meanwhile; the file's timeline goes on (a jump below)
                    stop.wait(min(kept_at + sparse - now, SPARSE_RECHECK_S))
                    continue
                if capture.grab():  # the device's frame is taken off it (the next one kept is fresh), not decoded
                    continue
            elif sparse and is_file and frames > 0:
                # The frame the file plays now, counted from its start (not from the last read: a seek or a read
                # that takes long would make it fall behind, read after read).
                origin = origin if origin is not None else now - (index + 1) * period
                due = int((now - origin) / period)
                if due > index + 1:
                    if packets:  # taken off undecoded: 1.3 ms a kept frame against 19 ms for a seek (measured)
                        _skip_packets(capture, min(due - index - 1, frames))
                    else:
                        capture.set(cv2.CAP_PROP_POS_FRAMES, due % frames)
                    index = due - 1
            else:
                origin = None
            ok, image = _read(capture, packets)
            index += 1
            if not ok and is_file:  # end of the file: loop it
                capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
                ok, image = _read(capture, packets)
                index = 0
                origin = None
            kept_at = time.monotonic()
            if not ok or image is None:
                if not stop.is_set():
                    self._set_status(False, "no camera: the source stopped delivering frames")
                return seq
            seq += 1
            self.stats.frames_read += 1
            with self._lock:
                if stop.is_set():  # closed meanwhile: the frame is dropped, never shown
                    return seq
                self._latest = Grab(np.asarray(image, dtype=np.uint8), time.time(), seq)
            if not self._status.available:
                self._set_status(True, "")
            self._wake_waiters()
            if is_file and origin is None:  # a file is read as fast as the disk allows: pace it like a camera
                next_due += period
                delay = next_due - time.monotonic()
                if delay > 0:
                    stop.wait(delay)
                else:
                    next_due = time.monotonic()
            elif is_file:
                next_due = time.monotonic()  # (when every frame is wanted again, they follow from here)
        return seq


def _jpeg_packets(capture: cv2.VideoCapture) -> bool:
    """Whether ``capture`` (a file) is Motion-JPEG and now gives its frames as JPEG packets (OpenCV's raw mode)."""
    fourcc = int(capture.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little")
    return fourcc.upper() == b"MJPG" and bool(capture.set(cv2.CAP_PROP_FORMAT, -1))


def _read(capture: cv2.VideoCapture, packets: bool) -> tuple[bool, Image | None]:
    """The next frame (a JPEG packet decoded, when ``packets``)."""
    ok, image = capture.read()
    if not ok or image is None:
        return False, None
    frame = cv2.imdecode(image, cv2.IMREAD_COLOR) if packets else image
    return frame is not None, None if frame is None else np.asarray(frame, dtype=np.uint8)


def _skip_packets(capture: cv2.VideoCapture, count: int) -> None:
    """Takes ``count`` packets off a file without decoding them, going on from its start at its end."""
    for _ in range(count):
        if not capture.grab():
            capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            capture.grab()


def build_camera(source: str, bus: Bus | None, *, switched_on: bool = True) -> OpenCVCamera:
    """The camera for ``settings.camera.source`` (``"none"`` gives a camera whose status says it is off) and the
    user's camera switch (``settings.camera.on``)."""
    return OpenCVCamera(source, bus, switched_on=switched_on)
