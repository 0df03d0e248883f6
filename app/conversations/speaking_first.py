"""When the companions may speak first: on what noticing saw, or after the user's silence.

A runtime part (:class:`SpeakingFirst`) that follows the bus: what noticing publishes (``PresenceNoticed``,
app/devices/presence.py), the conversation's messages, the user typing (``UserTyping``, from the window) and speaking
(``SpeechHeard``, from the microphone). On an occasion the user's settings allow (``[conversation]
speak_first_on_notice`` with noticing on; ``speak_first_after_min`` minutes of silence, off by default) and the rules
let through (companions/conversation/speaking_first.py: a cooldown, a cap per hour, never while the user types or
speaks, never in a conversation under way), it asks the conversation to open a turn on it; the companions' vote
decides whether anyone speaks and who. A silence is answered once (a turn opened on it; until then it is looked at
again every few seconds): the next one needs the user to have said something in between. While noticing says
nobody is there, a silence is nobody's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Final, Protocol

from app.settings.sections import ConversationSettings
from companions.common.languages import Language
from companions.companion.lines import detect_language
from companions.conversation.speaking_first import (
    FirstWordLimits,
    FirstWordRules,
    Occasion,
    OccasionKind,
    UserTyping,
    cue,
)
from companions.devices.presence import PresenceNoticed
from companions.voice_input.events import SpeechHeard
from companions.wire.bus import Bus, BusItem, Subscription
from companions.wire.protocol import Message

log = logging.getLogger(__name__)

ACTIVE_S: Final = 8.0  # the user typed or spoke this recently: they are busy, nobody speaks first
CHECK_EVERY_S: Final = 5.0  # how often a silence is looked at
# What noticing saw that the companions may answer ("left": nobody would hear it).
NOTICED_OCCASIONS: Final[dict[str, OccasionKind]] = {
    "arrived": "arrived", "returned": "returned", "second_person": "second_person", "held_up": "held_up",
    "dark": "dark",
}


class FirstTalk(Protocol):
    """What of the conversation this part needs (``ConversationManager``)."""

    @property
    def running(self) -> bool: ...

    async def speak_first(self, occasion: Occasion, cue: str) -> bool: ...


class SpeakingFirst:
    """Asks the companions to speak first when the settings and the rules allow it (the module's docstring)."""

    name = "speaking-first"

    def __init__(self, bus: Bus, talk: FirstTalk, settings: Callable[[], ConversationSettings], *,
                 user_id: Callable[[], str], language: Callable[[], Language], clock: Callable[[], float] = time.time,
                 check_every_s: float = CHECK_EVERY_S) -> None:
        self.bus = bus
        self.talk = talk
        self._settings = settings
        self._user_id = user_id
        self._language = language
        self._clock = clock
        self._check_every_s = check_every_s
        self.rules = FirstWordRules(self._limits())
        self.opened: list[Occasion] = []  # the occasions a turn opened on, oldest first (for tests and the log)
        self._last_message_at: float | None = None
        self._last_language: Language | None = None
        self._active_at = -ACTIVE_S  # the user's last keystroke or word heard
        self._quiet_since = 0.0  # when the current silence began (the start, or the latest message or activity)
        self._silence_answered = False
        self._nobody_there = False
        self._subscriptions: list[Subscription] = []
        self._silence: asyncio.Task[None] | None = None
        self._asking: asyncio.Task[None] | None = None

    # -- component ------------------------------------------------------------------------------------------
    async def start(self) -> None:
        self._quiet_since = self._clock()
        self._subscriptions = [self.bus.subscribe(("messages", "events"), self._on_item, name="speaking-first",
                                                  direct=True)]
        self._silence = asyncio.get_running_loop().create_task(self._watch_silence(), name="speaking-first-silence")

    async def stop(self) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        self._subscriptions = []
        for task in (self._silence, self._asking):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._silence = self._asking = None

    # -- what happens ---------------------------------------------------------------------------------------
    def _on_item(self, item: BusItem) -> None:
        now = self._clock()
        if isinstance(item, Message):
            self._last_message_at = now
            self._last_language = detect_language(item.params.message) or self._last_language
            self._quiet(now, answered=item.params.from_ != self._user_id() and self._silence_answered)
        elif isinstance(item, UserTyping) or (isinstance(item, SpeechHeard) and not item.final):
            self._active_at = now
            self._quiet(now)
        elif isinstance(item, PresenceNoticed):
            self._nobody_there = item.kind == "left"
            if item.kind in ("arrived", "returned"):
                self._quiet(now)  # a silence while nobody was there was nobody's
            kind = NOTICED_OCCASIONS.get(item.kind)
            if kind is not None and self._settings().speak_first_on_notice:
                self._ask(Occasion(kind, item.at, minutes=round(item.away_s / 60)))

    def _quiet(self, now: float, *, answered: bool = False) -> None:
        """A new silence begins at ``now``; ``answered``: it counts as answered already (the companions' line after
        a silence they answered: the next one waits for the user)."""
        self._quiet_since = now
        self._silence_answered = answered

    async def _watch_silence(self) -> None:
        while True:
            await asyncio.sleep(self._check_every_s)
            after_min = self._settings().speak_first_after_min
            now = self._clock()
            quiet_s = now - self._quiet_since
            if after_min <= 0 or self._silence_answered or self._nobody_there or quiet_s < after_min * 60:
                continue
            self._ask(Occasion("silence", now, minutes=int(quiet_s // 60)))  # again at the next check if not now

    def _ask(self, occasion: Occasion) -> None:
        """Opens a turn on ``occasion`` unless the rules say why not (logged); one at a time."""
        if self._asking is not None and not self._asking.done():
            log.info("speaking first on %s: not now (another occasion is being asked)", occasion.kind)
            return
        self.rules.limits = self._limits()
        now = self._clock()
        why_not = self.rules.refusal(now, user_active=now - self._active_at < ACTIVE_S,
                                     under_way=self.talk.running, last_message_at=self._last_message_at)
        if why_not is not None:  # (a silence is looked at again every few seconds: said in the log at debug level)
            log.log(logging.DEBUG if occasion.kind == "silence" else logging.INFO, "speaking first on %s: not now (%s)",
                    occasion.kind, why_not)
            return
        self._asking = asyncio.get_running_loop().create_task(self._open(occasion, now),
                                                              name=f"speaking-first:{occasion.kind}")

    async def _open(self, occasion: Occasion, now: float) -> None:
        language = self._last_language or self._language()
        if await self.talk.speak_first(occasion, cue(occasion, language)):
            if occasion.kind == "silence":
                self._silence_answered = True  # once a silence, whatever the vote says
            self.rules.spoke(now)
            self.opened.append(occasion)
            log.info("speaking first on %s: the companions vote", occasion.kind)
        else:
            log.info("speaking first on %s: not now (the conversation is busy)", occasion.kind)

    def _limits(self) -> FirstWordLimits:
        settings = self._settings()
        return FirstWordLimits(cooldown_s=settings.speak_first_cooldown_min * 60,
                               per_hour=settings.speak_first_per_hour)
