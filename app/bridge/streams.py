"""Streamed text for bridge clients: the ``message.stream`` notification.

Only Madoi's clients that ask for it in their ``hello`` (``"stream": true``) get these frames: clients of the
reference framework validate every frame strictly and must never see a method they do not know. While a
companion's model writes a line, each piece goes out as
``{"topic": "stream", "body": {"jsonrpc": "2.0", "method": "message.stream", "params": {"id", "from", "delta",
"done", "kind", "dropped"?}}}``. ``id`` is the turn (the id of the message being answered), ``from`` the
companion, ``delta`` the new text, ``kind`` ``"speech"`` (the text of its ``speak`` call: what it will say) or
``"text"`` (plain reply text, tool syntax and JSON held back). ``done: true`` (with ``delta: ""``) ends one model
request's text; a turn may stream again (a second attempt replaces the first). The line is final when the
companion's ``message.send`` arrives (its own id; it replaces the streamed text); ``done: true, dropped: true``
says the turn ended without saying it (interrupted, failed).
"""

from __future__ import annotations

import json
from typing import Any, Final

from companions.companion.worker import TextStreamed, TurnEnded
from companions.wire.bus import BusItem

STREAM_TOPIC: Final = "stream"
STREAM_METHOD: Final = "message.stream"
_STREAMS_CAP: Final = 256


class StreamFrames:
    """Turns ``TextStreamed`` / ``TurnEnded`` events into ``message.stream`` frames (``None``: nothing to send).

    A turn that streamed and then ended without being said (cancelled, failed) gets a last frame with
    ``done: true, dropped: true``; a finished turn needs none (its ``message.send`` follows, or a new attempt).
    """

    def __init__(self) -> None:
        self._kinds: dict[tuple[str, str], str] = {}  # (companion, turn) that streamed -> the last kind, oldest first

    def frame(self, item: BusItem) -> bytes | None:
        if isinstance(item, TextStreamed):
            key = (item.companion_id, item.turn_id)
            if key not in self._kinds and len(self._kinds) >= _STREAMS_CAP:
                del self._kinds[next(iter(self._kinds))]
            self._kinds[key] = item.kind
            return stream_frame({"id": item.turn_id, "from": item.companion_id, "delta": item.text,
                                 "done": item.done, "kind": item.kind})
        if isinstance(item, TurnEnded):
            kind = self._kinds.pop((item.companion_id, item.turn_id), None)
            if kind is None or item.status == "finished":
                return None
            return stream_frame({"id": item.turn_id, "from": item.companion_id, "delta": "", "done": True,
                                 "kind": kind, "dropped": True})
        return None


def stream_frame(params: dict[str, Any]) -> bytes:
    """The frame, in the bridge's framing ``{"topic", "body"}``, as UTF-8 JSON text."""
    body = {"jsonrpc": "2.0", "method": STREAM_METHOD, "params": params}
    return json.dumps({"topic": STREAM_TOPIC, "body": body}, ensure_ascii=False, separators=(",", ":")).encode()
