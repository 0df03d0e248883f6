"""Turn phases for Madoi's bridge clients that ask for them in their hello (``"turns": true``).

Each time the conversation's current turn changes phase or speaker, or the conversation ends, such a client gets
``{"topic": "turns", "body": {"jsonrpc": "2.0", "method": "turn.phase", "params": {"id", "number", "openedBy",
"phase", "speaker"?, "closing", "status", "endedReason"?}}}``. ``id`` is the turn (the id of the message that
opened it); ``phase`` is ``voting``, ``composing``, ``waiting``, ``speaking``, ``done``, ``cancelled`` or
``ended``; ``status`` is the conversation's (``running``, ``ended``). Clients of the reference framework never get
these frames.
"""

from __future__ import annotations

import json
from typing import Any, Final

from companions.conversation.readmodel import ConversationChanged
from companions.wire.bus import BusItem

TURNS_TOPIC: Final = "turns"
TURN_METHOD: Final = "turn.phase"


class TurnFrames:
    """Turns ``ConversationChanged`` events into ``turn.phase`` frames, one per visible change (``None``: none)."""

    def __init__(self) -> None:
        self._last: tuple[Any, ...] | None = None

    def frame(self, item: BusItem) -> bytes | None:
        if not isinstance(item, ConversationChanged) or item.view.turn is None:
            return None
        view, turn = item.view, item.view.turn
        params: dict[str, Any] = {"id": turn.turn_id, "number": turn.number, "openedBy": turn.opened_by,
                                  "phase": turn.phase, "closing": turn.closing, "status": view.status}
        if turn.speaker is not None:
            params["speaker"] = turn.speaker
        if view.ended_reason is not None:
            params["endedReason"] = view.ended_reason
        key = tuple(params.items())
        if key == self._last:
            return None  # votes, the floor, mutes ...: not a phase change
        self._last = key
        body = {"jsonrpc": "2.0", "method": TURN_METHOD, "params": params}
        return json.dumps({"topic": TURNS_TOPIC, "body": body}, ensure_ascii=False, separators=(",", ":")).encode()
