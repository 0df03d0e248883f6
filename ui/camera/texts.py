"""The words of the camera preview, in English and Japanese (the language setting picks).

The camera adapter says why there is no camera in English (``DeviceStatus.reason``, e.g. ``"no camera: cannot
open '0'"``); :func:`reason_text` says the known reasons in the user's language and shows any other one as it is.
"""

from __future__ import annotations

import re
from typing import Final

from ui.window.i18n import QT_TRANSLATE_NOOP, Texts, translate, window_language

TEXTS: Final = Texts("camera", {
    "title": QT_TRANSLATE_NOOP("camera", "Camera"),
    "indicator.on": QT_TRANSLATE_NOOP("camera", "Camera on"),
    "indicator.tooltip": QT_TRANSLATE_NOOP("camera", "The camera is on: the companions can look through it"),
    "state.live": QT_TRANSLATE_NOOP("camera", "Live preview"),
    "state.waiting": QT_TRANSLATE_NOOP("camera", "Waiting for the camera…"),
    "state.off": QT_TRANSLATE_NOOP("camera", "No camera"),
    "state.error": QT_TRANSLATE_NOOP("camera", "The preview failed"),
    "looked": QT_TRANSLATE_NOOP("camera", "{who} looked"),
    "looked.accessible": QT_TRANSLATE_NOOP("camera", "{who} looked through the camera"),
    # looks in the chat (ui/chat/looks.py)
    "chat.looked": QT_TRANSLATE_NOOP("camera", "{who} looked through the camera · {time}"),
    "chat.shown": QT_TRANSLATE_NOOP("camera", "You showed them the camera · {time}"),
    "chat.refused": QT_TRANSLATE_NOOP("camera", "{who} wanted to look, but the camera is off · {time}"),
    # what noticing saw (app/devices/presence.py), a line each in the chat too
    "chat.noticed.arrived": QT_TRANSLATE_NOOP("camera", "The companions noticed you · {time}"),
    "chat.noticed.returned": QT_TRANSLATE_NOOP("camera", "The companions noticed you came back · {time}"),
    "chat.noticed.left": QT_TRANSLATE_NOOP("camera", "The companions noticed you left · {time}"),
    "chat.noticed.second_person": QT_TRANSLATE_NOOP("camera", "The companions noticed someone with you · {time}"),
    "chat.noticed.held_up": QT_TRANSLATE_NOOP("camera", "The companions noticed you holding something up · {time}"),
    "chat.noticed.dark": QT_TRANSLATE_NOOP("camera", "The companions noticed the light went out · {time}"),
    # under the user's words in their bubble: the description sent with them, folded (click to read)
    "chat.fold": QT_TRANSLATE_NOOP("camera", "what the camera saw"),
    "picture.title": QT_TRANSLATE_NOOP("camera", "{who} looked at {time}"),
    "picture.shown_title": QT_TRANSLATE_NOOP("camera", "You showed them this at {time}"),
    "picture.noticed_title": QT_TRANSLATE_NOOP("camera", "Noticed at {time}"),
    "picture.gone": QT_TRANSLATE_NOOP(
        "camera", "This picture is no longer kept: only the last {n} looks keep their pictures."),
    "picture.size": QT_TRANSLATE_NOOP("camera", "{width} × {height} pixels"),
    "picture.close": QT_TRANSLATE_NOOP("camera", "Close"),
    # the "Show them" button (ui/chat/show_them.py)
    "show": QT_TRANSLATE_NOOP("camera", "Show them"),
    "show.tooltip": QT_TRANSLATE_NOOP(
        "camera", "Send your message with what the camera sees now: the companions get a description of the "
        "picture, and the chat keeps the picture"),
    "show.busy": QT_TRANSLATE_NOOP("camera", "Looking…"),
    "show.failed": QT_TRANSLATE_NOOP("camera", "Not shown: {error}. Your text is still in the box."),
})

NO_DEVICES: Final = "no camera: the devices are not running"  # the runtime has not started them (yet)
UNREADABLE_FRAME: Final = "a preview frame could not be decoded"

# The adapter's reasons (app/devices/camera.py) in Japanese; the groups are carried over as they are.
# The camera adapter's reasons (app/devices/camera.py), as patterns, and how each is said (its English words
# with the pattern's parts as {x}; translated like every other text).
_REASONS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(r"not started"), QT_TRANSLATE_NOOP("camera.reason", "not started")),
    (re.compile(r"turned off in the settings"), QT_TRANSLATE_NOOP("camera.reason", "turned off in the settings")),
    (re.compile(r"the user turned the camera off"),
     QT_TRANSLATE_NOOP("camera.reason", "you turned the camera off (the switch in the status bar)")),
    (re.compile(r"closed while looking"), QT_TRANSLATE_NOOP("camera.reason", "closed while looking")),
    (re.compile(r"the camera has not started yet"),
     QT_TRANSLATE_NOOP("camera.reason", "the camera has not started yet")),
    (re.compile(r"no video device (?P<x>.+)"), QT_TRANSLATE_NOOP("camera.reason", "no video device {x}")),
    (re.compile(r"no such device or video file (?P<x>.+)"),
     QT_TRANSLATE_NOOP("camera.reason", "no such device or video file {x}")),
    (re.compile(r"cannot open (?P<x>.+)"), QT_TRANSLATE_NOOP("camera.reason", "cannot open {x}")),
    (re.compile(r"the source stopped delivering frames"),
     QT_TRANSLATE_NOOP("camera.reason", "the source stopped delivering frames")),
    (re.compile(r"no frame within (?P<x>.+) s"), QT_TRANSLATE_NOOP("camera.reason", "no frame within {x} s")),
    (re.compile(r"the devices are not running"), QT_TRANSLATE_NOOP("camera.reason", "the devices are not running")),
    (re.compile(r"a preview frame could not be decoded"),
     QT_TRANSLATE_NOOP("camera.reason", "a preview frame could not be decoded")),
)
_PREFIX: Final = re.compile(r"^\s*no camera\s*:\s*", re.IGNORECASE)


def camera_text(key: str, language: str | None = None, /, **values: object) -> str:
    return TEXTS.text(key, language, **values)


def reason_text(reason: str, language: str | None = None) -> str:
    """The detail under "No camera": the adapter's reason without its "no camera:" prefix, in ``language`` (the
    window's when None) when it is a known one."""
    detail = _PREFIX.sub("", reason).strip()
    for pattern, words in _REASONS:
        match = pattern.fullmatch(detail)
        if match is not None:
            return translate("camera.reason", words, language or window_language()).format(**match.groupdict())
    return detail
