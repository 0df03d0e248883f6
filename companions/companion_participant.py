"""The adapter that lets conversation control drive a real :class:`~companions.companion.Companion`.

Conversation control decides who speaks and publishes the message itself; the companion votes, composes what to
say (its ``speak`` tool plans instead of speaking) and then voices the published message. The adapter also
describes the companion to the manager (its names, persona, and its model endpoint's pace), so that a named
companion can answer without a vote round and the vote deadline can follow the endpoint's measured speed.
"""

from __future__ import annotations

import logging
from typing import Final

from companions.cards import localized
from companions.companion import VOTE_MAX_TOKENS, Companion
from companions.conversation.direct import Pace
from companions.conversation.participant import Description, TurnContext, Utterance, Vote
from companions.llm.capabilities import capabilities_of
from companions.memory import estimate_tokens
from companions.protocol import Closing, Message

log = logging.getLogger(__name__)
VOTE_INSTRUCTION_TOKENS: Final = 200  # the vote instruction and its schema, after the companion's context


class CompanionParticipant:
    """A :class:`~companions.conversation.participant.Participant` backed by a Companion."""

    def __init__(self, companion: Companion) -> None:
        self.companion = companion
        meta = companion.card.metadata
        names = {localized(meta.name, lang) for lang in ("ja", "en")}
        persona = " ".join(localized(text, lang) for text in (meta.personality, meta.story, companion.card.role)
                           for lang in ("ja", "en"))
        self.description = Description(names=tuple(sorted(names)), persona=persona, pace_of=self.pace)

    @property
    def id(self) -> str:
        return self.companion.id

    def pace(self) -> Pace | None:
        """The companion's model endpoint: how many requests it runs at once and how long a vote takes there."""
        capabilities = capabilities_of(self.companion.model)
        if capabilities is None:
            return None
        prompt = sum(estimate_tokens(m.text) for m in self.companion.context()) + VOTE_INSTRUCTION_TOKENS
        return Pace(capabilities.base_url, capabilities.slots, capabilities.estimate_s(prompt, VOTE_MAX_TOKENS))

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
