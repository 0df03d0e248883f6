"""The status bar's camera switch: looking through the camera on or off for everyone, and a light while it is open.

Always in view (the Camera panel may be hidden): "Camera on" / "Camera off" (a crossed-out camera) as a checkable
button, in red with "in use" while the device is open (the preview on screen, a companion looking), as a webcam's
own light would say; "watching" while noticing watches through it (``[camera] notice``: someone arriving, leaving,
coming back), chosen in the switch's menu ("Let them notice you", saved like the switch). Clicking applies at once and
is kept across restarts (``[camera] on``); what happens is the port's (``app/devices/camera_controls.py``). The button
follows the camera's ``DeviceStatus`` and ``CameraInUse`` events and ``PresenceWatching``, so a switch changed
elsewhere (the settings file, a test) shows too.
"""

from __future__ import annotations

from typing import Final, Protocol

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from companions.devices.ports import CameraInUse, DeviceStatus
from companions.devices.presence import PresenceWatching
from companions.wire.bus import Bus, BusItem
from ui.camera.frame import camera_icon
from ui.camera.texts import reason_text
from ui.window.device_switch import DeviceSwitch
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts

_TEXTS: Final = Texts("camera_switch", {
    "on": QT_TRANSLATE_NOOP("camera_switch", "Camera on"),
    "off": QT_TRANSLATE_NOOP("camera_switch", "Camera off"),
    "in_use": QT_TRANSLATE_NOOP("camera_switch", "in use"),
    "watching": QT_TRANSLATE_NOOP("camera_switch", "watching"),
    "tooltip.watching": QT_TRANSLATE_NOOP(
        "camera_switch", "Noticing is on: a few small pictures a second, read on this computer and sent nowhere, tell "
        "the companions when you arrive, leave or come back."),
    "notice": QT_TRANSLATE_NOOP("camera_switch", "Let them notice you"),
    "notice.tooltip": QT_TRANSLATE_NOOP(
        "camera_switch", "The companions notice when you arrive, leave or come back: a few small pictures a second are "
        "read on this computer, never sent or kept. The camera stays open (its light on) while it watches."),
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
    """What the switch needs (``app.devices.camera_controls.RuntimeCamera`` is one)."""

    def is_on(self) -> bool: ...

    def in_use(self) -> bool: ...

    def watching(self) -> bool:
        """Noticing watches through the camera now."""
        ...

    def status(self) -> DeviceStatus | None:
        """The camera's status now (None before it started)."""
        ...

    async def set_on(self, on: bool) -> None: ...

    def notices(self) -> bool:
        """"Let them notice you" is chosen."""
        ...

    async def set_notice(self, on: bool) -> None: ...


class CameraSwitch(DeviceSwitch):
    """Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    light_changed = Signal(bool)  # the "in use" light went on or off

    def __init__(self, bus: Bus, port: CameraSwitchPort, parent: QWidget | None = None) -> None:
        super().__init__(bus, port, name="cameraSwitch", device="camera", parent=parent)
        self.port = port
        self._in_use = False
        self._watching = False  # noticing watches through the camera
        self._missing = ""  # why there is no camera to switch (turned off in the settings, not found), if so
        self._applying = 0  # the user's changes being applied
        self.notice_action = QAction(self)  # "Let them notice you", in the switch's menu
        self.notice_action.setObjectName("cameraNoticeAction")
        self.notice_action.setCheckable(True)
        self.notice_action.setChecked(port.notices())
        self.notice_action.triggered.connect(self._on_notice)  # the user's choice only, not setChecked
        menu = QMenu(self)
        menu.addAction(self.notice_action)
        menu.setToolTipsVisible(True)
        self.setMenu(menu)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.setChecked(port.is_on())
        self.refresh()

    def _on_notice(self, checked: bool) -> None:
        self._tasks.spawn(self._apply_notice(checked), name="camera-notice")

    async def _apply_notice(self, on: bool) -> None:
        self.error = ""
        try:
            await self.port.set_notice(on)
        except Exception as err:  # applied; only saving it failed
            self.error = str(err) or type(err).__name__
        finally:
            self.notice_action.setChecked(self.port.notices())
            self.refresh()

    def on_attach(self) -> None:
        self._in_use = self.port.in_use()
        self._watching = self.port.watching()
        super().on_attach()

    @property
    def on(self) -> bool:
        return self.isChecked()

    @property
    def light(self) -> bool:
        """The "in use" light is shown."""
        return self._in_use and self.isChecked()

    @property
    def watching(self) -> bool:
        """"watching" is shown: noticing reads the camera's frames."""
        return self._watching and self.light

    @property
    def missing(self) -> str:
        """Why there is no camera to switch ("" when there is one, or when the switch itself turned it off)."""
        return self._missing

    def read_port(self) -> None:
        self._follow_status(self.port.status())

    def applying(self) -> None:
        self._applying += 1

    def applied(self) -> None:
        self._applying -= 1  # enabled again by read_port once no change is left to apply and there is a camera

    def _follow_status(self, status: DeviceStatus | None) -> None:
        """No camera (turned off in the settings, not found, failing) is said as such, not as "Camera on": the
        switch's own "off" is its state, any other reason means there is nothing to switch."""
        self._missing = status.reason if status is not None and not status.available and self.port.is_on() else ""
        self.setEnabled(self._applying == 0 and not self._missing)

    def on_item(self, item: BusItem) -> None:
        light = self.light
        if isinstance(item, CameraInUse):
            self._in_use = item.in_use
        elif isinstance(item, PresenceWatching):
            self._watching = item.watching
        elif isinstance(item, DeviceStatus) and item.device == "camera":
            if self._applying == 0:  # not while the user's own change is being applied
                self._follow_status(item)
                self.setChecked(self.port.is_on())
        else:
            return
        self.refresh()
        if self.light != light:
            self.light_changed.emit(self.light)

    def _t(self, key: str, **values: object) -> str:
        return _TEXTS.text(key, **values)

    def failed_text(self, error: str) -> str:
        return self._t("failed", error=error)

    def refresh(self) -> None:
        on = self.isChecked() and not self._missing
        text = self._t("on" if on else "none" if self._missing else "off")
        tip = self._t("tooltip.on" if on else "tooltip.off") if not self._missing else \
            self._t("tooltip.none", reason=reason_text(self._missing))
        if self.light:
            text = f"{text} · {self._t('watching' if self.watching else 'in_use')}"
            tip = f"{self._t('tooltip.in_use')} {tip}"
            if self.watching:
                tip = f"{tip}\n{self._t('tooltip.watching')}"
        color = QColor(LIGHT_COLOR if self.light else OFF_COLOR if not on else self.palette().buttonText().color())
        self.show_state(text, tip, camera_icon(16, color, crossed=not on))
        self.notice_action.setText(self._t("notice"))
        self.notice_action.setToolTip(self._t("notice.tooltip"))
        # The light in the webcam's red; off reads as off (muted) at a glance.
        self.setStyleSheet(f"QToolButton#cameraSwitch {{ color: {LIGHT_COLOR}; font-weight: bold; }}" if self.light
                           else f"QToolButton#cameraSwitch {{ color: {OFF_COLOR}; }}" if not on else "")
