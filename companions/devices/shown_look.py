"""What the camera saw, carried at the end of a user's message ("Show them"), and marked as such in its metadata.

When the user shows the companions what the camera sees (app/devices/camera_controls.py), the description is appended to
the user's words in the message itself, because that is what every companion reads: this app's, those on other
machines and the reference framework's, whose nodes read ``message`` only. So that a window can still show the
user's words as the user's (and the description apart, folded), the message's metadata names the appended part::

    {"jsonrpc": "2.0", "method": "message.send",
     "params": {"id": "...", "from": "user", "to": ["akari"],
                "message": "Can you see me?\\n[The user shows you what the camera sees. On-device description ...]",
                "metadata": {"look": "[The user shows you what the camera sees. On-device description ...]"}}}

The reference framework's message schema takes any metadata record (``z.record(z.string(), z.any())``), so its
clients still validate the message. The mark is only believed for what it says of the text: it must be the end of
the message, after the words and a line break (:func:`shown_parts`); anything else is shown as the text it is.
"""

from __future__ import annotations

from typing import Final

from companions.wire.protocol import Message

LOOK_KEY: Final = "look"


def look_metadata(look: str) -> dict[str, str]:
    """The metadata entries that mark ``look`` (the end of the message's text) as what the camera saw."""
    return {LOOK_KEY: look}


def shown_look(message: Message) -> str | None:
    """The part of ``message`` that is what the camera saw, or None when it carries no (valid) mark."""
    metadata = message.params.metadata
    if metadata is None or metadata.model_extra is None:
        return None
    look = metadata.model_extra.get(LOOK_KEY)
    if not isinstance(look, str):
        return None
    return split_look(message.params.message, look)[1] or None


def shown_parts(message: Message) -> tuple[str, str]:
    """The user's own words and what the camera saw ("" when the message carries no look)."""
    return split_look(message.params.message, shown_look(message))


def split_look(text: str, look: str | None) -> tuple[str, str]:
    """``text`` as the words before ``look`` and the look, when ``text`` still ends with it after a line break
    (an edited message may not); else all of it and ""."""
    if look and look.strip() and text.endswith(look):
        words = text[:-len(look)]
        if words.endswith("\n") and words.strip():
            return words.rstrip(), look
    return text, ""
