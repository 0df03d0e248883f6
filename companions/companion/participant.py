"""The adapter that lets conversation control drive a real :class:`~companions.companion.companion.Companion`.

Conversation control decides who speaks and publishes the message itself; the companion votes, composes what to
say (its ``speak`` tool plans instead of speaking) and then voices the published message. The adapter also
describes the companion to the manager (its names, persona, and its model endpoint's pace), so that a named
companion can answer without a vote round and the vote deadline can follow the endpoint's measured speed. Where a
round's companions share a model endpoint with fewer slots than them, one request decides their votes together
(joint_vote.py).
"""

from __future__ import annotations

import logging
from typing import ClassVar, Final

from companions.cards.card import localized
from companions.companion.companion import VOTE_MAX_TOKENS, Companion
from companions.companion.composing import FillerLine
from companions.companion.filler import filler_metadata
from companions.companion.joint_vote import join, joint_voter_s
from companions.companion.lines import detect_language
from companions.companion.speech_stream import SentenceChunker
from companions.companion.worker import TextStreamed
from companions.conversation.ballot import Vote
from companions.conversation.participant import (
    ComposedLine,
    Description,
    Pace,
    Participant,
    ParticipantRoster,
    TurnContext,
)
from companions.conversation.selection import counted
from companions.llm import priorities
from companions.llm.capabilities import capabilities_of
from companions.llm.types import ChatRequest, complete
from companions.memory.context import estimate_tokens
from companions.wire.protocol import Closing, Message

log = logging.getLogger(__name__)
VOTE_INSTRUCTION_TOKENS: Final = 200  # the vote instruction and its schema, after the companion's context


def _warms(companion: Companion) -> bool:
    """Whether warming the companion's prompt pays: a local server (a hosted API bills the tokens and caches
    prompts by itself; a model without an endpoint has no prompt cache)."""
    capabilities = capabilities_of(companion.model)
    return capabilities is not None and capabilities.local


class CompanionParticipant(Participant):
    """A :class:`~companions.conversation.participant.Participant` backed by a Companion; it says the first sentences
    of its line while the rest is generated (early speech)."""

    speaks_early = True
    joins_ballots: ClassVar[bool] = True  # votes through joint ballots where they pay (joint_vote.py)

    def __init__(self, companion: Companion) -> None:
        self.companion = companion
        self.id = companion.id
        meta = companion.card.metadata
        names = {localized(meta.name, lang) for lang in ("ja", "en")}
        persona = " ".join(localized(text, lang) for text in (meta.personality, meta.story, companion.card.role)
                           for lang in ("ja", "en"))
        self.description = Description(names=tuple(sorted(names)), persona=persona, pace_of=self.pace,
                                       warm=self.warm, own=True)
        self._line_id = ""
        self._part = -1

    def pace(self) -> Pace | None:
        """The companion's model endpoint: how many requests it runs at once and how long a vote takes there."""
        capabilities = capabilities_of(self.companion.model)
        if capabilities is None:
            return None
        prompt = sum(estimate_tokens(m.text) for m in self.companion.context()) + VOTE_INSTRUCTION_TOKENS
        return Pace(capabilities.base_url, capabilities.slots, capabilities.estimate_s(prompt, VOTE_MAX_TOKENS),
                    capabilities.bound_s(prompt, VOTE_MAX_TOKENS), joint=self.joins_ballots,
                    joint_voter_s=joint_voter_s(self.companion.model))

    async def warm(self) -> bool:
        """Has the companion's model server evaluate its prompt prefix (system prompt and memory: what its next
        vote, events and reply requests begin with) so that its prompt cache holds it: a one-token request at the
        lowest priority (conversation/warming.py). Only where it pays (:func:`_warms`), checked each time: the user
        may connect another model while the app runs. Returns whether the prompt was evaluated (not on a model not
        found yet: nothing to warm until it is)."""
        if not _warms(self.companion):
            return False
        # In the language the next turn's prompt will most likely be in: the last message's (companion.py)
        entries = self.companion.memory.entries
        language = (detect_language(entries[-1].text) if entries else None) or self.companion.language
        request = ChatRequest(messages=tuple(self.companion.context(language)), max_tokens=1,
                              priority=priorities.WARM_UP)
        await complete(self.companion.model, request)
        return True

    async def _catch_up(self, turn: TurnContext) -> None:
        """Remembers what the turn's history holds that the bus has not delivered yet: a line from elsewhere ends
        one turn and opens the next at once, while this companion may still be storing the message before it."""
        for message in turn.history:
            await self.companion.hear(message)

    async def vote(self, turn: TurnContext) -> Vote:
        """The companion's vote: from the joint request of its round's companions on its endpoint, or (alone there,
        or with a slot each) from its own request. It joins the joint ballot before awaiting anything."""
        seat = join(self.companion, turn) if self.joins_ballots else None
        try:
            await self._catch_up(turn)
        except BaseException:
            if seat is not None:
                seat.leave()
            raise
        vote = await seat.vote() if seat is not None else None
        if vote is None:
            vote = await self.companion.vote(turn.message, closing_hint=turn.closing_hint)
        return counted(vote, turn)

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        self._line_id, self._part = f"{turn.message.params.id}:{self.id}", -1
        await self._catch_up(turn)
        follower = _SentenceFollower(self.companion, turn) if turn.early is not None else None
        try:
            planned = await self.companion.compose(turn.message, closing, origin=turn.origin)
        finally:
            if follower is not None:
                follower.close()
        if planned is None:
            return None
        # A stock filler is marked on the published message, with the reason (companions/companion/filler.py).
        metadata = filler_metadata(planned.reason) if isinstance(planned, FillerLine) else {}
        return ComposedLine(text=planned.text, to=planned.to, emotion=planned.emotion, metadata=metadata,
                            private=planned.private)

    async def speak_part(self, text: str) -> None:
        """Voices one sentence of the line being composed (early speech); returns when it was said."""
        self._part += 1
        result = await self.companion.builtins.say(text, line_id=self._line_id, part=self._part)
        if not result.success:
            log.warning("%s: speech failed: %s", self.id, result.reason)

    async def speak(self, message: Message) -> None:
        result = await self.companion.say(message)
        if not result.success:
            log.warning("%s: speech failed: %s", self.id, result.reason)


class _SentenceFollower:
    """Follows the companion's line as its model streams it and offers each finished sentence for early speech.

    Only the first attempt's sentences are offered (a retried line was a repeat: it is not said early), cleaned as
    the whole line will be (no name prefix, no tool syntax), up to the line's length."""

    def __init__(self, companion: Companion, turn: TurnContext) -> None:
        assert turn.early is not None
        self._offer = turn.early
        self._companion = companion
        self._turn_id = turn.message.params.id
        self._chunker = SentenceChunker()
        self._done = False
        self._subscription = companion.bus.subscribe("events", self._on_event, name=f"early:{companion.id}")

    def _on_event(self, item: object) -> None:
        if (self._done or not isinstance(item, TextStreamed) or item.companion_id != self._companion.id
                or item.turn_id != self._turn_id):
            return
        if item.done:
            self._done = True  # the first request's text is over; a retry is never said early
            return
        for sentence in self._chunker.feed(item.text):
            cleaned = self._companion.sanitize(sentence)
            if cleaned:
                self._offer(cleaned + (" " if cleaned[-1].isascii() else ""))

    def close(self) -> None:
        self._done = True
        self._subscription.close()


def seat(conversation: ParticipantRoster, companion: Companion, present: bool) -> None:
    """Lets ``companion`` leave the conversation (it no longer hears, votes, or is named to the others as present;
    its memory keeps what it heard) or brings it back (it hears from the next message on)."""
    companion.present = present
    seated = companion.id in conversation.present
    if present and not seated:
        conversation.add_participant(CompanionParticipant(companion))
    elif not present and seated:
        conversation.remove_participant(companion.id)
