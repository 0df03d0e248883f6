"""The status bar's camera switch: looking through the camera on or off for everyone, and a light while it is open.

Always in view (the Camera panel may be hidden): "Camera on" / "Camera off" (a crossed-out camera) as a checkable
button, in red with "in use" while the device is open (the preview on screen, a companion looking), as a webcam's
own light would say. Clicking applies at once and is kept across restarts (``[camera] on``); what happens is the port's
(``app/camera_controls.py``). The button follows the camera's ``DeviceStatus`` and ``CameraInUse`` events, so a
switch changed elsewhere (the settings file, a test) shows too.
"""

from __future__ import annotations

import logging
from typing import Final, Protocol

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QToolButton, QWidget

from companions.bus import Bus, BusItem
from companions.devices import CameraInUse, DeviceStatus
from companions.tasks import TaskSet
from ui.bus_bridge import BusFollower
from ui.camera_frame import camera_icon
from ui.camera_texts import reason_text
from ui.i18n import QT_TRANSLATE_NOOP, Texts, is_language_change
from ui.naming import named

log = logging.getLogger(__name__)

_TEXTS: Final = Texts("camera_switch", {
    "on": QT_TRANSLATE_NOOP("camera_switch", "Camera on"),
    "off": QT_TRANSLATE_NOOP("camera_switch", "Camera off"),
    "in_use": QT_TRANSLATE_NOOP("camera_switch", "in use"),
    "tooltip.on": QT_TRANSLATE_NOOP(
        "camera_switch", "The companions may look through the camera when they need to; every look is shown in the "
        "chat. Click to turn the camera off for everyone."),
    "tooltip.in_use": QT_TRANSLATE_NOOP("camera_switch", "The camera is open now."),
    "tooltip.off": QT_TRANSLATE_NOOP(
        "camera_switch", "Nobody can look through the camera: it stays closed. Click to turn it on."),
    "failed": QT_TRANSLATE_NOOP("camera_switch", "The switch holds for now, but could not be saved: {error}"),
    "none": QT_TRANSLATE_NOOP("camera_switch", "No camera"),
    "tooltip.none": QT_TRANSLATE_NOOP(
        "camera_switch", "There is no camera to switch: {reason}. Set one in Settings (Camera and voice)."),
})
LIGHT_COLOR: Final = "#e53935"
OFF_COLOR: Final = "#8a8f98"


class CameraSwitchPort(Protocol):
    """What the switch needs (``app.camera_controls.RuntimeCamera`` is one)."""

    def is_on(self) -> bool: ...

    def in_use(self) -> bool: ...

    def status(self) -> DeviceStatus | None:
        """The camera's status now (None before it started)."""
        ...

    async def set_on(self, on: bool) -> None: ...


class CameraSwitch(QToolButton):
    """Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    switched = Signal(bool)  # applied (and saved, or said why not)
    light_changed = Signal(bool)  # the "in use" light went on or off

    def __init__(self, bus: Bus, port: CameraSwitchPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "cameraSwitch")
        self.port = port
        self.setCheckable(True)
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.error = ""
        self._in_use = False
        self._missing = ""  # why there is no camera to switch (turned off in the settings, not found), if so
        self._applying = 0  # the user's changes being applied
        self._bus_link = BusFollower(bus, ("events",))
        self._tasks = TaskSet("camera-switch")
        self.setChecked(port.is_on())
        self.clicked.connect(self._on_clicked)
        self._render()

    def attach(self) -> None:
        self._bus_link.follow(self, self._on_item)
        self._in_use = self.port.in_use()
        self._follow_status(self.port.status())
        self.setChecked(self.port.is_on())
        self._render()

    def detach(self) -> None:
        self._bus_link.stop()
        self._tasks.cancel()

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self._render()
        super().changeEvent(event)

    @property
    def on(self) -> bool:
        return self.isChecked()

    @property
    def light(self) -> bool:
        """The "in use" light is shown."""
        return self._in_use and self.isChecked()

    @property
    def missing(self) -> str:
        """Why there is no camera to switch ("" when there is one, or when the switch itself turned it off)."""
        return self._missing

    def _on_clicked(self, checked: bool) -> None:
        self._applying += 1
        self.setEnabled(False)  # one change at a time
        self._render()
        self._tasks.spawn(self._apply(checked), name="camera-switch")

    async def _apply(self, on: bool) -> None:
        self.error = ""
        try:
            await self.port.set_on(on)
        except Exception as err:  # the switch applied (the camera follows first); only saving it failed
            log.warning("camera switch not saved: %s", err)
            self.error = str(err) or type(err).__name__
        finally:
            self._applying -= 1
            self._follow_status(self.port.status())
            self.setChecked(self.port.is_on())
            self._render()
        self.switched.emit(self.isChecked())

    def _follow_status(self, status: DeviceStatus | None) -> None:
        """No camera (turned off in the settings, not found, failing) is said as such, not as "Camera on": the
        switch's own "off" is its state, any other reason means there is nothing to switch."""
        self._missing = status.reason if status is not None and not status.available and self.port.is_on() else ""
        self.setEnabled(self._applying == 0 and not self._missing)

    def _on_item(self, item: BusItem) -> None:
        light = self.light
        if isinstance(item, CameraInUse):
            self._in_use = item.in_use
        elif isinstance(item, DeviceStatus) and item.device == "camera":
            if self._applying == 0:  # not while the user's own change is being applied
                self._follow_status(item)
                self.setChecked(self.port.is_on())
        else:
            return
        self._render()
        if self.light != light:
            self.light_changed.emit(self.light)

    def _t(self, key: str, **values: object) -> str:
        return _TEXTS.text(key, **values)

    def _render(self) -> None:
        on = self.isChecked() and not self._missing
        text = self._t("on" if on else "none" if self._missing else "off")
        tip = self._t("tooltip.on" if on else "tooltip.off") if not self._missing else \
            self._t("tooltip.none", reason=reason_text(self._missing))
        if self.light:
            text = f"{text} · {self._t('in_use')}"
            tip = f"{self._t('tooltip.in_use')} {tip}"
        if self.error:
            tip = f"{tip}\n{self._t('failed', error=self.error)}"
        color = QColor(LIGHT_COLOR if self.light else OFF_COLOR if not on else self.palette().buttonText().color())
        self.setIcon(QIcon(camera_icon(16, color, crossed=not on)))
        self.setText(text)
        self.setToolTip(tip)
        self.setAccessibleName(text)
        self.setAccessibleDescription(tip)
        # The light in the webcam's red; off reads as off (muted) at a glance.
        self.setStyleSheet(f"QToolButton#cameraSwitch {{ color: {LIGHT_COLOR}; font-weight: bold; }}" if self.light
                           else f"QToolButton#cameraSwitch {{ color: {OFF_COLOR}; }}" if not on else "")
