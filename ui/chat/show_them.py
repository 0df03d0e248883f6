"""The "Show them" button beside Send: the user shows the companions what the camera sees now.

It sends what is in the message box (or "Look." when it is empty) to the chosen companions together with what the
camera sees at that moment: the app looks as the user, the chat shows that look ("You showed them the camera",
the picture on click) and the message carries the picture's description, so even a model that never calls its
``vision`` tool sees (``app/devices/camera_controls.py``). The text is cleared once it went out; when the picture cannot
be taken (the camera is switched off, missing...) the reason is said under the box and the text stays.
"""

from __future__ import annotations

import logging
from typing import Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton

from companions.common.tasks import TaskSet
from ui.camera.texts import camera_text, reason_text
from ui.chat.panel import ChatPanel
from ui.settings.form import show_result
from ui.window.attached import Retranslating
from ui.window.naming import named

log = logging.getLogger(__name__)


class ShowCamera(Protocol):
    """What the button needs (``app.devices.camera_controls.RuntimeCamera`` is one)."""

    async def show(self, text: str, to: list[str] | None = None) -> str:
        """Looks as the user and sends ``text`` with what was seen; returns the message's id; raises with the
        reason when no picture could be taken."""
        ...


class ShowThemButton(Retranslating, QPushButton):
    """Put beside ``chat``'s Send button (:meth:`place`)."""

    shown = Signal(str)  # the id of the message that carried the picture
    failed = Signal(str)  # the reason, as said under the box

    def __init__(self, chat: ChatPanel, camera: ShowCamera) -> None:
        super().__init__()
        named(self, "showThemButton")
        self.chat = chat
        self.camera = camera
        self._tasks = TaskSet("show-them")
        self.clicked.connect(self.show_them)
        self._render()

    def place(self) -> None:
        """Puts the button just before the chat's Send button."""
        layout = self.chat.input_row
        index = layout.indexOf(self.chat.send_button)
        layout.insertWidget(index if index >= 0 else layout.count(), self)

    def detach(self) -> None:
        self._tasks.cancel()

    def retranslate(self) -> None:
        self._render()

    def show_them(self) -> None:
        if not self.isEnabled():
            return
        self.setEnabled(False)
        self.setText(camera_text("show.busy"))
        self._tasks.spawn(self._show(self.chat.input.toPlainText()), name="show-them")

    async def _show(self, text: str) -> None:
        try:
            message_id = await self.camera.show(text.strip(), self.chat.address.addressees() or None)
        except Exception as err:  # whatever the reason, the user's words stay where they are
            log.warning("showing the camera failed: %s", err)
            reason = reason_text(str(err).splitlines()[0] if str(err) else type(err).__name__)
            show_result(self.chat.error, "error", camera_text("show.failed", error=reason))
            self.chat.error.show()
            self.failed.emit(reason)
            return
        finally:
            self.setEnabled(True)
            self._render()
        self.chat.error.hide()
        if self.chat.input.toPlainText() == text:  # not if the user went on typing meanwhile
            self.chat.input.clear()
        self.shown.emit(message_id)

    def _render(self) -> None:
        self.setText(camera_text("show"))
        self.setToolTip(camera_text("show.tooltip"))
        self.setAccessibleDescription(self.toolTip())
