"""Early speech: the chosen speaker's first sentences are said while the rest of its line is generated.

A small local model generates ~55 tokens a second: a three-sentence line takes 2-3 s to write, and waiting for all
of it before the voice starts doubles the silence after the user's message. While the speaker composes, its
participant offers each finished (and cleaned) sentence (:meth:`EarlySpeech.offer`). The first one starts the
speech as soon as the floor is clear (pacing still holds: never over the previous speech); the next ones follow in
order. When the line is complete the manager publishes the message and hands over its text
(:meth:`EarlySpeech.finish`): what was already said is not said again, the rest is. Cancelling (a user message,
Interrupt, Stop) cuts the speech like any other: the floor's task is cancelled, and with it the speak query.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from companions.common.tasks import TaskSet
from companions.conversation.pacing import Floor

log = logging.getLogger(__name__)
SpeakPart = Callable[[str], Awaitable[None]]
_END: Final = None


class EarlySpeech:
    """One speaker's line, said sentence by sentence as it is composed. Use once per composition."""

    def __init__(self, speaker: str, speak_part: SpeakPart, *, floor: Floor, owner: TaskSet, max_chars: int) -> None:
        self.speaker = speaker
        self._speak_part = speak_part
        self._floor = floor
        self._owner = owner
        self._max_chars = max_chars
        self._parts: asyncio.Queue[str | None] = asyncio.Queue()
        self._said: list[str] = []
        self._offered = 0
        self._closed = False
        self._starter: asyncio.Task[None] | None = None
        self.holding = asyncio.Event()  # set once this speech holds the floor

    @property
    def started(self) -> bool:
        """Whether a sentence was offered (the speech holds the floor or is waiting for it)."""
        return self._starter is not None

    @property
    def offered_text(self) -> str:
        """Every sentence offered so far, in order (what the listener hears, or is about to)."""
        return "".join(self._said)

    def offer(self, sentence: str) -> None:
        """A finished sentence of the line being composed (ignored once the line's length is reached)."""
        if self._closed or not sentence.strip() or self._offered + len(sentence) > self._max_chars:
            return
        self._offered += len(sentence)
        self._said.append(sentence)
        self._parts.put_nowait(sentence)
        if self._starter is None:
            self._starter = self._owner.spawn(self._take_floor(), name=f"early-speech:{self.speaker}")

    async def _take_floor(self) -> None:
        await self._floor.wait_clear()
        self._floor.start(self.speaker, self._speak())
        self.holding.set()

    async def _speak(self) -> None:
        # Each sentence goes out as soon as it is known: the voice queues them in order, and synthesises the next
        # while the current one plays (no gap of a whole synthesis between sentences).
        sent: list[asyncio.Task[None]] = []
        try:
            while (part := await self._parts.get()) is not _END:
                sent.append(asyncio.ensure_future(self._speak_part(part)))
            if sent:
                await asyncio.gather(*sent)
        finally:
            for task in sent:
                task.cancel()

    async def finish(self, text: str) -> None:
        """The whole line is known: says what is left of ``text`` after what was already offered, then ends.

        Returns once this speech holds the floor (the caller publishes the message then)."""
        self._closed = True
        rest = remainder(text, self.offered_text)
        if rest is None:
            log.info("%s: the final line differs from its early sentences; it is said whole", self.speaker)
            rest = text
        if rest.strip():
            self._parts.put_nowait(rest.strip())
        self._parts.put_nowait(_END)
        if self._starter is not None:
            await asyncio.wait([self._starter])

    async def cancel(self) -> None:
        """Drops the composition: nothing more is offered; a speech not yet holding the floor never starts."""
        self._closed = True
        if self._starter is not None and not self._starter.done():
            self._starter.cancel()
            await asyncio.wait([self._starter])
        self._parts.put_nowait(_END)


def remainder(text: str, said: str) -> str | None:
    """What is left of ``text`` after its beginning ``said`` (white space aside); ``None`` if it begins otherwise."""
    position = 0
    for char in said:
        if char.isspace():
            continue
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text) or text[position] != char:
            return None
        position += 1
    return text[position:].lstrip()
