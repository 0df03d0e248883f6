"""The camera panel: what the companions see, a camera-on indicator, a flash when one of them looks, and why there
is no camera when there is none.

Frames: a QTimer asks the runtime's camera for a small preview JPEG (``OpenCVCamera.preview``, cached per frame and
encoded in an executor thread) at a modest rate, with at most one request in flight (an owned task; a tick that
finds one running is skipped). Only a *new* frame is decoded, on the GUI thread: about 0.6 ms for a 320 px JPEG
(measured under Xvfb). The timer runs only while the panel is attached and visible, so a hidden tab costs nothing;
and only then does the panel *hold* the camera: the device is open while its preview is on screen (or someone
looks), closed otherwise (``app/devices/camera.py``).

States (:data:`PreviewState`): ``off`` (no camera, with the adapter's reason, from ``DeviceStatus`` events and the
camera's status), ``waiting`` (the camera is available but has no frame yet), ``live`` (frames flow: the
indicator is on) and ``error`` (the last preview request failed; it is logged and polling goes on).

Looks: every look through the camera (``CameraLooked`` on the bus: a companion's ``vision`` query that was
answered, or a picture the user showed them) flashes the panel's border and says who looked; a look refused by
the camera switch does not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeAlias

from PySide6.QtCore import QEasingCurve, Qt, QTimer, QVariantAnimation, Signal
from PySide6.QtGui import QHideEvent, QImage, QPixmap, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from companions.devices.ports import CameraFrame, CameraLooked, DeviceStatus
from companions.wire.bus import BusItem
from ui.camera.frame import FrameView
from ui.camera.texts import NO_DEVICES, UNREADABLE_FRAME, camera_text, reason_text
from ui.roster.display_names import DisplayNames
from ui.window.attached import AttachedWidget
from ui.window.naming import named

if TYPE_CHECKING:
    from collections.abc import Callable

    from companions.wire.bus import Bus
    from ui.window.panel_ports import People

log = logging.getLogger(__name__)

PreviewState: TypeAlias = Literal["off", "waiting", "live", "error"]
DEFAULT_FPS: Final = 10.0
DEFAULT_PREVIEW_WIDTH: Final = 320
FLASH_MS: Final = 450  # the border's highlight fades out over this
CAPTION_MS: Final = 3000  # "<name> looked" stays long enough to be read
INDICATOR_COLOR: Final = "#e53935"


class CameraHold(Protocol):
    def release(self) -> None: ...


class PreviewCamera(Protocol):
    """What the panel needs of the camera (``app.devices.camera.OpenCVCamera`` is one)."""

    @property
    def status(self) -> DeviceStatus: ...

    def hold(self, purpose: str) -> CameraHold:
        """Keeps the device open until the hold is released."""
        ...

    async def preview(self, max_width: int = 320) -> CameraFrame | None: ...


@dataclass
class PreviewStats:
    """What polling cost, for tests and benchmarks."""

    requests: int = 0  # preview requests started
    skipped: int = 0  # ticks that found a request still in flight
    frames: int = 0  # new frames decoded and shown
    errors: int = 0  # failed requests or unreadable frames
    decode_s: float = 0.0  # GUI-thread time spent decoding frames, in total
    decode_max_s: float = 0.0


class CameraPreview(AttachedWidget, QWidget):
    """The camera panel: ``camera`` gives the camera (None when there is none, or before the runtime started),
    ``bus`` what looks through it. Call :meth:`attach` once the runtime started, :meth:`detach` before it stops.
    ``fps`` bounds the preview requests per second; ``preview_width`` is the JPEG's width asked for."""

    frame_shown = Signal(float)  # a new frame is on screen: its capture time (time.time())
    flashed = Signal(str)  # a companion (or client) id that looked through the camera
    state_changed = Signal(str, str)  # the PreviewState and its detail, whenever either changes

    def __init__(self, bus: Bus, camera: Callable[[], PreviewCamera | None], people: People, *,
                 fps: float = DEFAULT_FPS,
                 preview_width: int = DEFAULT_PREVIEW_WIDTH, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if fps <= 0:
            raise ValueError("fps must be positive")
        self.camera = camera
        self.people = people
        self.names = DisplayNames(people)
        self.preview_width = preview_width
        self.stats = PreviewStats()
        self.indicator = named(QLabel(), "cameraIndicator")
        self.indicator.setTextFormat(Qt.TextFormat.RichText)
        policy = self.indicator.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the frame does not jump when the indicator comes and goes
        self.indicator.setSizePolicy(policy)
        self.indicator.hide()
        self.view = named(FrameView(), "cameraView")
        header = QHBoxLayout()
        header.setContentsMargins(4, 2, 4, 2)
        header.addWidget(self.indicator)
        header.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.view, 1)

        self.timer = QTimer(self)
        self.timer.setObjectName("cameraPollTimer")
        self.timer.setInterval(max(1, round(1000 / fps)))
        self.timer.timeout.connect(self._tick)
        self.flash_animation = QVariantAnimation(self)
        self.flash_animation.setStartValue(1.0)
        self.flash_animation.setEndValue(0.0)
        self.flash_animation.setDuration(FLASH_MS)
        self.flash_animation.setEasingCurve(QEasingCurve.Type.OutCubic)
        self.flash_animation.valueChanged.connect(self._on_flash_value)
        self._caption_timer = QTimer(self)
        self._caption_timer.setSingleShot(True)
        self._caption_timer.setInterval(CAPTION_MS)
        self._caption_timer.timeout.connect(self._clear_caption)

        self.follow_bus(bus, ("events",))
        self._hold: CameraHold | None = None  # the device is held open while the preview polls
        self._poll_task: asyncio.Task[None] | None = None
        self._state: PreviewState = "off"
        self._reason = ""  # the adapter's reason (off) or the error's text (error), as given
        self._shown_timestamp: float | None = None
        self._looker: str | None = None
        self._failing = False  # logs the first failure of a streak, not every tick
        self.retranslate()

    # -- lifecycle -------------------------------------------------------------------------------------------
    def on_attach(self) -> None:
        """Starts polling while visible (the bus is followed from now on)."""
        self._check_status()
        self._update_polling()

    def on_detach(self) -> None:
        """Stops polling and cancels the request in flight."""
        self.timer.stop()
        self._let_go()
        task = self._poll_task
        if task is not None:
            task.cancel()  # its done-callback forgets it
        self.flash_animation.stop()
        self._caption_timer.stop()
        self.view.flash = 0.0
        self.view.update()

    # -- what the user sees ----------------------------------------------------------------------------------
    @property
    def state(self) -> PreviewState:
        return self._state

    @property
    def poll_task(self) -> asyncio.Task[None] | None:
        """The preview request in flight, if any."""
        return self._poll_task

    @property
    def polling(self) -> bool:
        return self.timer.isActive()

    def headline(self) -> str:
        """What the panel says in large letters when there is no frame ("No camera" ...); "" while live."""
        return self.view.headline if self.view.pixmap is None else ""

    def detail(self) -> str:
        """The reason under the headline (the camera's reason or the error), in the panel's language."""
        return self.view.detail if self.view.pixmap is None else ""

    def look_text(self) -> str:
        """"<name> looked" while the caption shows, else ""."""
        return self.view.caption

    def frame(self) -> QPixmap | None:
        return self.view.pixmap

    # -- polling ---------------------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._update_polling()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._update_polling()

    def _update_polling(self) -> None:
        if self.attached and self.isVisible():
            if not self.timer.isActive():
                self._hold_camera()
                self.timer.start()
                self._tick()  # a panel that comes into view shows the camera at once
        else:
            self.timer.stop()
            self._let_go()

    def _hold_camera(self) -> None:
        if self._hold is None:
            camera = self._camera()
            if camera is not None:
                self._hold = camera.hold("preview")

    def _let_go(self) -> None:
        """The device may close: nothing is shown any more (the last frame goes too: it would be stale)."""
        hold, self._hold = self._hold, None
        if hold is not None:
            hold.release()
            self._clear_frame()

    def _camera(self) -> PreviewCamera | None:
        return self.camera()

    def _check_status(self) -> PreviewCamera | None:
        """Shows "no camera" when there is none; returns the camera when it is available."""
        camera = self._camera()
        if camera is None:
            self._show_off(NO_DEVICES)
            return None
        status = camera.status
        if not status.available:
            self._show_off(status.reason)
            return None
        if self._state == "off":
            self._set_state("waiting", "")
        return camera

    def _tick(self) -> None:
        try:
            self._hold_camera()  # (the camera may have come later than the panel)
            camera = self._check_status()
            if camera is None:
                return
            if self._poll_task is not None:
                self.stats.skipped += 1
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # Qt delivers a tick while no asyncio loop runs (e.g. tearing down): skip it
                return
            self.stats.requests += 1
            task = loop.create_task(self._poll(camera), name="camera-preview")
            self._poll_task = task
            task.add_done_callback(self._poll_done)
        except Exception:  # a slot never raises
            log.exception("camera preview: tick failed")

    def _poll_done(self, task: asyncio.Task[None]) -> None:
        if self._poll_task is task:
            self._poll_task = None
        if not task.cancelled() and task.exception() is not None:
            log.error("camera preview: request failed", exc_info=task.exception())

    async def _poll(self, camera: PreviewCamera) -> None:
        try:
            frame = await camera.preview(self.preview_width)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            if self.attached:
                self._show_error(err)
            return
        if not self.attached or self._check_status() is None:
            return  # detached, or the camera went away while the frame was being encoded
        if frame is None:
            if self.view.pixmap is None:
                self._set_state("waiting", "")
            return
        try:
            self._show_frame(frame)
        except Exception as err:  # a frame the GUI cannot take is a state too, not a crash
            self._show_error(err)

    def _show_frame(self, frame: CameraFrame) -> None:
        if frame.timestamp == self._shown_timestamp and self.view.pixmap is not None:
            self._set_state("live", "")  # the camera has no newer frame yet (or the panel polls faster)
            return
        began = time.perf_counter()
        image = QImage()
        image.loadFromData(frame.jpeg, "JPG")  # named, so that Qt does not probe every image plugin (~15 ms)
        pixmap = QPixmap.fromImage(image) if not image.isNull() else None
        spent = time.perf_counter() - began
        self.stats.decode_s += spent
        self.stats.decode_max_s = max(self.stats.decode_max_s, spent)
        if pixmap is None:
            self._show_error(ValueError(UNREADABLE_FRAME))
            return
        self.stats.frames += 1
        if self._failing:
            log.info("camera preview: frames again")
            self._failing = False
        self._shown_timestamp = frame.timestamp
        self.view.pixmap = pixmap
        self._set_state("live", "")
        self.view.update()
        self.frame_shown.emit(frame.timestamp)

    # -- states ----------------------------------------------------------------------------------------------
    def _show_off(self, reason: str) -> None:
        self._clear_frame()
        self._set_state("off", reason)

    def _show_error(self, err: BaseException) -> None:
        self.stats.errors += 1
        if not self._failing:
            log.error("camera preview failed (polling goes on)", exc_info=err)
            self._failing = True
        self._clear_frame()
        self._set_state("error", str(err) or type(err).__name__)

    def _clear_frame(self) -> None:
        if self.view.pixmap is not None:
            self.view.pixmap = None
            self.view.update()
        self._shown_timestamp = None

    def _set_state(self, state: PreviewState, reason: str) -> None:
        if state == self._state and reason == self._reason:
            return
        self._state, self._reason = state, reason
        self._render_state()
        self.state_changed.emit(state, reason)

    def _render_state(self) -> None:
        view = self.view
        state = self._state
        view.camera_off = state == "off"
        view.headline = camera_text(f"state.{state}")
        view.detail = reason_text(self._reason)  # "" while waiting or live
        self.indicator.setVisible(state == "live")
        summary = f"{view.headline}: {view.detail}" if view.detail else view.headline
        view.setAccessibleName(camera_text("title"))
        view.setAccessibleDescription(summary)
        view.setToolTip(summary if state != "live" else "")
        view.update()

    # -- the bus ---------------------------------------------------------------------------------------------
    def on_item(self, item: BusItem) -> None:
        try:
            if isinstance(item, CameraLooked) and not item.refused:
                self._show_look(item.looker)
            elif isinstance(item, DeviceStatus) and item.device == "camera" and self.attached:
                if item.available:
                    if self._check_status() is not None and self.timer.isActive():
                        self._tick()
                else:
                    self._show_off(item.reason)
        except Exception:  # a slot never raises
            log.exception("camera preview: bus item %s not shown", type(item).__name__)

    def _show_look(self, who: str) -> None:
        self._looker = who
        self.view.caption = self._look_caption()
        self.view.setAccessibleDescription(camera_text("looked.accessible", who=self.names.of(who, in_sentence=True)))
        self.flash_animation.stop()
        self.view.flash = 1.0  # at once: the animation's first value comes with its first frame
        self.flash_animation.start()
        self._caption_timer.start()
        self.view.update()
        self.flashed.emit(who)

    def _look_caption(self) -> str:
        if self._looker is None:
            return ""
        return camera_text("looked", who=self.names.of(self._looker, in_sentence=True))

    def _on_flash_value(self, value: object) -> None:
        self.view.flash = float(value) if isinstance(value, (int, float)) else 0.0
        self.view.update()

    def _clear_caption(self) -> None:
        self._looker = None
        self.view.caption = ""
        self.view.update()

    @property
    def flashing(self) -> bool:
        """True while the border's highlight fades."""
        return self.flash_animation.state() == QVariantAnimation.State.Running

    def retranslate(self) -> None:
        self.indicator.setText(f'<span style="color:{INDICATOR_COLOR}; font-size:large;">&#9679;</span>&nbsp;'
                               f'<b>{camera_text("indicator.on")}</b>')
        self.indicator.setToolTip(camera_text("indicator.tooltip"))
        self.indicator.setAccessibleName(camera_text("indicator.on"))
        self.view.caption = self._look_caption()
        self._render_state()
