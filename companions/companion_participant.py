"""The adapter that lets conversation control drive a real :class:`~companions.companion.Companion`.

Conversation control decides who speaks and publishes the message itself; the companion votes, composes what to
say (its ``speak`` tool plans instead of speaking) and then voices the published message.
"""

from __future__ import annotations

import logging

from companions.companion import Companion
from companions.conversation.participant import TurnContext, Utterance, Vote
from companions.protocol import Closing, Message

log = logging.getLogger(__name__)


class CompanionParticipant:
    """A :class:`~companions.conversation.participant.Participant` backed by a Companion."""

    def __init__(self, companion: Companion) -> None:
        self.companion = companion

    @property
    def id(self) -> str:
        return self.companion.id

    async def vote(self, turn: TurnContext) -> Vote:
        choice = await self.companion.vote(turn.message, closing_hint=turn.closing_hint)
        return Vote(
            state=choice.state,
            importance=choice.importance,
            selected=choice.selected or turn.addressed_directly,
            closing=choice.closing,
            reason=choice.reason,
        )

    async def compose(self, turn: TurnContext, closing: Closing) -> Utterance | None:
        planned = await self.companion.compose(turn.message, closing)
        if planned is None:
            return None
        return Utterance(text=planned.text, to=planned.to, emotion=planned.emotion)

    async def speak(self, message: Message) -> None:
        result = await self.companion.say(message)
        if not result.succeeded:
            log.warning("%s: speech failed: %s", self.id, result.error)

    async def interrupt(self) -> None:
        # Generation and the speak query are coroutines the manager cancels; nothing runs outside the loop here.
        return None
