"""The camera as the window's user controls it: the status bar's switch and the "Show them" button.

- **The switch** (:meth:`RuntimeCamera.set_on`) turns looking off (or on) for everyone at once and for good: the
  camera closes its device and refuses every look (``OpenCVCamera.switch``), noticing stops watching, and
  ``[camera] on`` is saved in the settings, so the next start keeps it.
- **Showing** (:meth:`RuntimeCamera.show`): the user shows the companions what the camera sees now. The app looks as
  the user (the look is published like any other: the chat shows "You showed them the camera" with the picture)
  and the user's message carries what was seen, in words every model reads: the camera's on-device description,
  marked as such in the text and, for the windows, in the metadata (companions/devices/shown_look.py: the chat shows the
  user's words as theirs and the description folded). This is the one way a model that never calls its ``vision``
  tool still sees (asked "can you see me?", a small model answered "Oh, I see." without looking); the message is
  stored and remembered like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from app.runtime.runtime import Runtime
from companions.companion.lines import detect_language
from companions.devices.ports import DeviceStatus
from companions.devices.shown_look import look_metadata

if TYPE_CHECKING:
    from app.devices.camera import OpenCVCamera

# What a shown picture adds to the user's words (the companions read it; the window folds it away: shown_look.py).
_SHOWN: Final = {
    "en": "[The user shows you what the camera sees. {description}]",
    "ja": "［ユーザーがカメラの映像を見せています。{description}］",
}
_LOOK: Final = {"en": "Look.", "ja": "見て。"}  # when the user shows the picture without a word


def shown_parts(text: str, description: str, language: str) -> tuple[str, str]:
    """The user's words (or "Look.") and what the camera saw, as the message will say them (one line each)."""
    lang = "ja" if language == "ja" else "en"
    return text.strip() or _LOOK[lang], _SHOWN[lang].format(description=description.strip())


def shown_message(text: str, description: str, language: str) -> str:
    """The user's message for a shown picture: their words (or "Look."), then what the camera saw."""
    return "\n".join(shown_parts(text, description, language))


@dataclass(frozen=True)
class RuntimeCamera:
    """``ui.camera.switch.CameraSwitchPort`` and ``ui.chat.looks.ShowCamera`` on the runtime (before the runtime has
    started, the switch only changes the setting and nothing can be shown)."""

    runtime: Runtime

    def _camera(self) -> OpenCVCamera | None:
        return self.runtime.parts.devices.camera if self.runtime.started else None

    def is_on(self) -> bool:
        return self.runtime.settings.camera.on

    def in_use(self) -> bool:
        camera = self._camera()
        return camera is not None and camera.in_use

    def watching(self) -> bool:
        """Noticing watches through the camera now (``app/devices/presence.py``)."""
        presence = self.runtime.parts.devices.presence if self.runtime.started else None
        return presence is not None and presence.watching

    def status(self) -> DeviceStatus | None:
        """The camera's status (no camera: turned off in the settings, not found ...); None before it started."""
        camera = self._camera()
        return camera.status if camera is not None else None

    async def set_on(self, on: bool) -> None:
        """Applies the switch at once, then saves it (raises OSError when the settings cannot be written: the
        switch still holds for this run)."""
        settings = self.runtime.settings
        settings.camera.on = on  # the settings object the dialog edits too: it saves the switch as it is now
        camera = self._camera()
        if camera is not None:
            await camera.switch(on)
        await self.runtime.loaded.save(settings)

    def notices(self) -> bool:
        """"Let them notice you" (``[camera] notice``) is chosen."""
        return self.runtime.settings.camera.notice

    async def set_notice(self, on: bool) -> None:
        """"Let them notice you": applies at once (noticing watches, or stops and lets the camera go), then saves it
        (raises OSError when the settings cannot be written: the choice still holds for this run)."""
        settings = self.runtime.settings
        settings.camera.notice = on
        presence = self.runtime.parts.devices.presence if self.runtime.started else None
        if presence is not None:
            await presence.set_on(on)
        await self.runtime.loaded.save(settings)

    async def show(self, text: str, to: list[str] | None = None) -> str:
        """Looks as the user and sends ``text`` with what the camera saw; returns the message's id. Raises
        ``DeviceUnavailable`` (the camera is off, missing...) or RuntimeError (not started) with the reason."""
        camera = self._camera()
        if camera is None:
            raise RuntimeError("the camera has not started yet")
        from app.devices.vision_description import in_words  # OpenCV: loaded with the camera, not the window

        settings = self.runtime.settings
        frame = await camera.capture(describe=True, looker=settings.general.user_name)
        # In the language of the user's words (the companions answer in the language of the message).
        language = detect_language(text) or settings.general.language
        summary = in_words(frame.description, language) if frame.description is not None else ""
        words, look = shown_parts(text, summary, language)
        # The look is in the text every companion reads, and marked in the metadata for the windows that show it.
        sent = self.runtime.parts.conversations.send(f"{words}\n{look}", to, metadata=look_metadata(look))
        return sent.params.id
