"""What each participant heard: the conversation's messages in order, and when each participant joined.

A participant knows only what it heard while present (its own context, never the whole log): it hears from the
message after it joined on. The user may edit or delete a message afterwards; what everyone heard follows.
"""

from __future__ import annotations

import collections
from collections.abc import Reversible
from typing import Final

from companions.wire.protocol import Message

KEPT: Final = 500


def heard_since(history: Reversible[tuple[int, Message]], since: int, limit: int) -> tuple[Message, ...]:
    """The messages of ``history`` (``(sequence number, message)``, oldest first) from ``since`` on, at most the
    newest ``limit``: what a participant that joined at ``since`` heard."""
    heard: list[Message] = []
    for seq, message in reversed(history):  # newest first, so a long history costs nothing extra
        if seq < since or len(heard) >= limit:
            break
        heard.append(message)
    return tuple(reversed(heard))


class HeardHistory:
    """The messages heard (numbered in order) and each present participant's join point."""

    def __init__(self, limit: int) -> None:
        self.limit = limit  # the most messages one participant is told (its history in a turn)
        self._history: collections.deque[tuple[int, Message]] = collections.deque(maxlen=KEPT)
        self._joined: dict[str, int] = {}
        self._seq = 0
        self._heard: dict[int, tuple[Message, ...]] = {}  # by join point, since the last message

    def join(self, who: str) -> None:
        self._joined[who] = self._seq + 1  # hears from the next message on

    def leave(self, who: str) -> None:
        self._joined.pop(who, None)

    def hear(self, message: Message) -> None:
        self._seq += 1
        self._history.append((self._seq, message))
        self._heard.clear()

    @property
    def last(self) -> Message | None:
        return self._history[-1][1] if self._history else None

    def heard_by(self, who: str) -> tuple[Message, ...]:
        """What ``who`` heard while present, oldest first, at most ``limit`` messages. Participants that joined
        together heard the same: it is worked out once per join point until the next message."""
        since = self._joined.get(who, 0)
        heard = self._heard.get(since)
        if heard is None:
            heard = self._heard[since] = heard_since(self._history, since, self.limit)
        return heard

    def clear(self) -> None:
        """Forgets every message (the user opened another conversation); who is present stays present."""
        self._history.clear()
        self._heard.clear()

    def revise(self, message_id: str, text: str | None) -> None:
        """The user edited (``text``) or deleted (None) a message."""
        revised = ((seq, m if m.params.id != message_id else m.model_copy(
            update={"params": m.params.model_copy(update={"message": text})}))
                   for seq, m in self._history if m.params.id != message_id or text is not None)
        self._history = collections.deque(revised, maxlen=KEPT)
        self._heard.clear()
