"""A device's switch in the status bar (the camera's, the microphone's): a checkable tool button that follows the
device's events on the bus, applies the user's click through its port (one change at a time; a failure to save is
said in its tooltip) and says its state again on a language change. Each switch says what its device's state looks
like (:meth:`DeviceSwitch.refresh`) and what it reads of its port."""

from __future__ import annotations

import logging
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QToolButton, QWidget

from companions.common.tasks import TaskSet
from companions.wire.bus import Bus
from ui.window.attached import AttachedWidget
from ui.window.naming import named

log = logging.getLogger(__name__)


class SwitchPort(Protocol):
    """What every device switch asks of its device."""

    def is_on(self) -> bool: ...

    async def set_on(self, on: bool) -> None: ...


class DeviceSwitch(AttachedWidget, QToolButton):
    """Call :meth:`attach` once the runtime started, :meth:`detach` before it stops; a switch follows its device's
    events on the bus in :meth:`on_item`. ``name`` is the Qt object name (``cameraSwitch``) and ``device`` the
    device's name in the log."""

    switched = Signal(bool)  # applied (and saved, or said why not)

    def __init__(self, bus: Bus, port: SwitchPort, *, name: str, device: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, name)
        self._device = device
        self.setCheckable(True)
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.error = ""
        self.follow_bus(bus, ("events",))
        self._tasks = TaskSet(f"{device}-switch")
        self._switch_port = port
        self.clicked.connect(self._on_clicked)

    def on_attach(self) -> None:
        self.read_port()
        self.setChecked(self._switch_port.is_on())
        self.refresh()

    def on_detach(self) -> None:
        self._tasks.cancel()

    def retranslate(self) -> None:
        self.refresh()

    def read_port(self) -> None:
        """Takes the device's state from its port (at attach, and after the user's change was applied)."""

    def refresh(self) -> None:
        """Says the state (:meth:`show_state`)."""
        raise NotImplementedError

    def applying(self) -> None:
        """The user's change begins."""

    def applied(self) -> None:
        """The user's change was applied (or failed to save): the switch may be used again."""
        self.setEnabled(True)

    def show_state(self, text: str, tip: str, icon: QPixmap) -> None:
        if self.error:
            tip = f"{tip}\n{self.failed_text(self.error)}"
        self.setIcon(QIcon(icon))
        self.setText(text)
        self.setToolTip(tip)
        self.setAccessibleName(text)
        self.setAccessibleDescription(tip)

    def failed_text(self, error: str) -> str:
        raise NotImplementedError

    def _on_clicked(self, checked: bool) -> None:
        self.applying()
        self.setEnabled(False)  # one change at a time
        self.refresh()
        self._tasks.spawn(self._apply(checked), name=f"{self._device}-switch")

    async def _apply(self, on: bool) -> None:
        self.error = ""
        try:
            await self._switch_port.set_on(on)
        except Exception as err:  # the switch applied (the device follows first); only saving it failed
            log.warning("%s switch not saved: %s", self._device, err)
            self.error = str(err) or type(err).__name__
        finally:
            self.applied()
            self.read_port()
            self.setChecked(self._switch_port.is_on())
            self.refresh()
        self.switched.emit(self.isChecked())
