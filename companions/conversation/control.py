"""User control: mute/unmute, force the next speaker, interrupt, stop.

A user message interrupts by itself (it cancels what is in flight and opens a new turn). :class:`InterruptConversation`
interrupts without one, for a person who wants to cut in before typing: the speech playing, the generation and the
pending turns stop, and the companions wait for the user. :class:`StopConversation` does the same work but means
"that is enough": the two differ in the end reason the read model shows.

Control works two ways: direct calls on the manager, or commands published on the bus ``events`` topic (so the UI,
a bridge client handler or a test can steer the conversation without holding a reference to the manager).
Each command has an outcome value; a refused command (unknown companion, forcing a muted one) says why.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Protocol

from companions.bus import LocalEvent

log = logging.getLogger(__name__)


class ConversationCommand(LocalEvent):
    """Base of the commands the conversation manager accepts on the ``events`` topic."""


@dataclass(frozen=True)
class MuteCompanion(ConversationCommand):
    """Mute (``muted=True``) or unmute a companion: a muted one neither votes nor is picked."""

    companion: str
    muted: bool = True


@dataclass(frozen=True)
class ForceNextSpeaker(ConversationCommand):
    """The named companion takes the next turn (once); if the conversation is idle, it resumes it."""

    companion: str


@dataclass(frozen=True)
class InterruptConversation(ConversationCommand):
    """Cuts in now: the speech playing, the generation and the pending turns stop; the companions wait for the
    user's next message (which opens a new turn as usual)."""


@dataclass(frozen=True)
class StopConversation(ConversationCommand):
    """Ends the conversation now: pending turns, generation and speech are cancelled."""


class Controls(Protocol):
    """What the commands do (the ConversationManager's user control)."""

    def mute(self, companion: str, muted: bool = True) -> ControlOutcome: ...

    async def force_next(self, companion: str) -> ControlOutcome: ...

    async def stop_conversation(self) -> ControlOutcome: ...

    async def interrupt(self) -> ControlOutcome: ...


class CommandInbox:
    """The commands published on the bus, obeyed one at a time in publish order by :meth:`run` (an owned task).

    :meth:`offer` is a direct bus subscriber of the ``events`` topic: that topic also carries the manager's own view
    events (a dozen a turn), which are dropped here at once instead of waking a task each."""

    def __init__(self, controls: Controls) -> None:
        self._controls = controls
        self._queue: asyncio.Queue[ConversationCommand] = asyncio.Queue()

    def offer(self, item: object) -> None:
        if isinstance(item, ConversationCommand):
            self._queue.put_nowait(item)

    async def run(self) -> None:
        while True:
            command = await self._queue.get()
            try:
                await self._obey(command)
            except Exception:  # a failing command is reported; the next one is still obeyed
                log.exception("conversation command %s failed", type(command).__name__)

    async def _obey(self, command: ConversationCommand) -> None:
        if isinstance(command, MuteCompanion):
            self._controls.mute(command.companion, command.muted)
        elif isinstance(command, ForceNextSpeaker):
            await self._controls.force_next(command.companion)
        elif isinstance(command, StopConversation):
            await self._controls.stop_conversation()
        elif isinstance(command, InterruptConversation):
            await self._controls.interrupt()


@dataclass(frozen=True)
class ControlOutcome:
    ok: bool
    detail: str


@dataclass
class ControlState:
    """Muted companions and the one-shot forced speaker."""

    muted: set[str] = field(default_factory=set)
    forced: str | None = None

    def set_muted(self, companion: str, muted: bool, present: frozenset[str]) -> ControlOutcome:
        if companion not in present:
            return ControlOutcome(False, f"{companion} is not here")
        if muted:
            self.muted.add(companion)
            if self.forced == companion:
                self.forced = None
            return ControlOutcome(True, f"{companion} is muted")
        self.muted.discard(companion)
        return ControlOutcome(True, f"{companion} may speak again")

    def force(self, companion: str, present: frozenset[str]) -> ControlOutcome:
        if companion not in present:
            return ControlOutcome(False, f"{companion} is not here")
        if companion in self.muted:
            return ControlOutcome(False, f"{companion} is muted; unmute it first")
        self.forced = companion
        return ControlOutcome(True, f"{companion} speaks next")

    def take_forced(self, present: frozenset[str]) -> str | None:
        """Returns and clears the forced speaker, if it is still present and unmuted."""
        forced, self.forced = self.forced, None
        if forced is None or forced not in present or forced in self.muted:
            return None
        return forced
