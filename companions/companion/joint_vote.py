"""Joint ballots: one request decides the votes of every companion of a vote round on one model endpoint.

A server that answers one request at a time (llama.cpp, llama-cpp-python, the app's own runner) queues the votes of
a round behind each other: with six companions each vote waited for five others (measured on the real 0.5B model:
four votes a turn were late, a turn took about two minutes). So the companions that share an endpoint (its base URL
and model, :mod:`companions.llm.capabilities`) vote through one request there:

- **Gathered per round and endpoint.** The vote round starts every ballot at once (vote_round.py), and each
  companion's vote :func:`join`\\ s the joint ballot of its round (the ``TurnContext``'s
  :class:`~companions.conversation.participant.Ballots`) and endpoint before it awaits anything. The ballot closes
  once the event loop has run every ballot started with it (one ``call_soon``), so it holds exactly the votes of
  that round on that endpoint.
- **One request, one entry per companion.** When the ballot holds more companions than the endpoint has slots, one
  structured request decides them all, once every member has caught up on the turn's messages. It begins with one
  member's own prompt (its persona and the conversation as it heard it: the shared context, once): the member the
  idle conversation warms (warming.py), so the server's prompt cache holds that prefix already, and holds it still
  for that member's line should it be chosen. Then the ballot (resources/prompts: ``joint_vote``): every member in
  one line (name, id, the first sentence of its personality), who votes, who was named, and the closing stage the
  framework pushes toward. The answer says where the conversation stands once (``closing``: one judge) and under
  ``votes`` one entry per member (``state``, ``importance``, a short ``reason``); a member is ``selected`` when the
  message named it (known without the model, by direct.py's rule). Every generated token is paid once per member:
  measured on the profile of llama-cpp-python (bench/first_word.py), the five fields in every entry made six
  companions' turn 2.6x one companion's. Each member's vote is its entry; an entry missing or invalid counts as
  ``listen``, as a vote the model could not give does today.
- **Otherwise as before.** A companion alone on its endpoint, or an endpoint with a slot for every member (or a
  model without an endpoint, such as the scripted one), votes with its own request
  (:meth:`~companions.companion.companion.Companion.vote`).

Each member's vote is still its own ballot for the round: its node judges it and publishes its State
(vote_round.py); a member whose ballot ends (its deadline, the round settled elsewhere) leaves the joint request to
the others, and the request is cancelled when no member is left.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, Field, RootModel, ValidationError

from companions.cards.card import localized
from companions.companion.companion import NO_USABLE_VOTE, Companion
from companions.companion.composing import reply_language
from companions.companion.prompts import joint_vote_members_prompt, joint_vote_prompt
from companions.conversation.ballot import Vote
from companions.conversation.direct import likely_speaker, named_companion
from companions.conversation.participant import Ballots, TurnContext
from companions.llm.capabilities import capabilities_of
from companions.llm.structured import generate_structured
from companions.llm.types import ChatMessage, ChatModel
from companions.wire.protocol import Closing, Speech

log = logging.getLogger(__name__)
JOINT_VOTE_NAME: Final = "joint_vote"  # the response format's name (and the schema's title)
ENTRY_REASON_CHARS: Final = 24  # a short reason: every character is generated once per member
ENTRY_TOKENS: Final = 40  # one member's entry in the answer, the reason included
ANSWER_TOKENS: Final = 32  # the answer's closing, braces and the tokens around the entries
PERSONA_CHARS: Final = 40  # of a member's personality in the prompt
MEMBER_LINE_TOKENS: Final = 50
_SENTENCE_END: Final = re.compile(r"(?<=[。！？!?])|(?<=\.)\s")
RECENT_LINES: Final = 6  # the companion lines the conversation's recent turns count (ConversationConfig.recent_window)


class JointEntry(BaseModel):
    """What the model fills for one companion: the part of a :class:`~companions.conversation.ballot.Vote` that is
    its own, with a shorter reason (read back as a Vote: a longer reason is cut there)."""

    state: Speech
    importance: int = Field(ge=0, le=10)
    reason: str = Field(default="", json_schema_extra={"maxLength": ENTRY_REASON_CHARS})


def answer_schema(voters: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a joint vote's answer: where the conversation stands (``closing``, once: one judge), and
    under ``votes`` one required :class:`JointEntry` per voter id, written out for each (no ``$ref``: every grammar
    converter of a local server reads it). Who was named is known without the model (:func:`joint_messages`)."""
    entry = JointEntry.model_json_schema()
    closing = {"enum": ["none", "pre-closing", "closing", "terminal"], "type": "string"}
    votes = {"type": "object", "properties": {v: entry for v in voters}, "required": list(voters),
             "additionalProperties": False}
    return {"type": "object", "title": JOINT_VOTE_NAME, "properties": {"closing": closing, "votes": votes},
            "required": ["closing", "votes"], "additionalProperties": False}


def answer_model(voters: Sequence[str]) -> type[RootModel[dict[str, Any]]]:
    """What a joint vote's answer is read as: any JSON object (each entry is read on its own by :func:`entry_vote`,
    so one bad entry costs only its companion's vote), asked for with :func:`answer_schema`."""
    schema = answer_schema(voters)

    class JointVoteAnswer(RootModel[dict[str, Any]]):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return schema

    return JointVoteAnswer


def answer_votes(answer: dict[str, Any], voters: Sequence[str], named: str | None) -> dict[str, Vote]:
    """Each voter's vote in a joint vote's ``answer``: its entry, with the answer's ``closing`` (``none`` when that
    is missing or invalid: the framework's push still applies) and ``selected`` when the message named it."""
    closing = answer.get("closing")
    shared: Closing = closing if closing in ("none", "pre-closing", "closing", "terminal") else "none"
    votes = answer.get("votes")
    entries = votes if isinstance(votes, dict) else {}
    return {v: entry_vote(entries.get(v), closing=shared, selected=v == named) for v in voters}


def entry_vote(entry: object, *, closing: Closing, selected: bool) -> Vote:
    """The vote one entry of the answer gives: ``listen`` (as when a model's own vote is unusable) when it is
    missing or invalid."""
    if not isinstance(entry, dict):
        return NO_USABLE_VOTE
    try:
        return Vote.model_validate({**entry, "closing": closing, "selected": selected})
    except ValidationError:
        return NO_USABLE_VOTE


def answer_tokens(members: int) -> int:
    """The token limit of a joint vote's answer for ``members`` companions."""
    return ANSWER_TOKENS + members * ENTRY_TOKENS


def endpoint_of(model: ChatModel) -> tuple[Hashable, int | None]:
    """Which endpoint a model's requests queue at, and how many it runs at once (``None``: as many as asked). A
    model without an endpoint (the scripted one) is an endpoint of its own, without a limit."""
    capabilities = capabilities_of(model)
    if capabilities is None:
        return id(model), None
    return (capabilities.base_url, capabilities.model), capabilities.slots


def joint_voter_s(model: ChatModel) -> float | None:
    """How much one more member lengthens a joint vote on ``model``'s endpoint (its persona line read, its entry
    generated), as measured there; ``None`` until both the prompt and the generation speed are measured (a warm-up
    of one token measures only the prompt's: an entry's generation is most of its cost). A persona line is new to
    the server's prompt cache: read at the speed of new tokens, once that was measured."""
    capabilities = capabilities_of(model)
    if capabilities is None or capabilities.prompt_tps is None or capabilities.gen_tps is None:
        return None
    reading = capabilities.cold_prompt_tps or capabilities.prompt_tps
    return MEMBER_LINE_TOKENS / reading + ENTRY_TOKENS / capabilities.gen_tps


def member_line(companion: Companion, language: str) -> str:
    """A member in one line of the joint prompt, in ``language``: its name, id and the first sentence of its
    personality, cut to :data:`PERSONA_CHARS` (every character of it is read once per member and turn)."""
    meta = companion.card.metadata
    persona = " ".join(localized(meta.personality, language).split())
    first = _SENTENCE_END.split(persona, maxsplit=1)[0]
    if len(first) > PERSONA_CHARS:
        first = first[: PERSONA_CHARS - 1] + "…"
    return f"- {localized(meta.name, language)} (id: {companion.id}): {first}"


def base_member(members: Sequence[Companion], turn: TurnContext) -> Companion:
    """The member whose prompt the joint vote's begins with: the one the conversation warms while idle (the likely
    speaker of a message to everyone: who spoke least among the last companion lines, then by id; warming.py), so
    that the server's prompt cache holds that prefix already, and holds it still for that member's line."""
    ids = {m.id for m in members}
    spoken = [m.params.from_ for m in turn.history if m.params.from_ in turn.present][-RECENT_LINES:]
    likely = likely_speaker(sorted(ids), text="", recent_turns=collections.Counter(spoken), previous_speaker=None,
                            personas={})
    return next(m for m in members if m.id == likely)


def named_member(members: Sequence[Companion], turn: TurnContext) -> str | None:
    """The one member ``turn``'s message names, if one (by ``to`` or a name in its text: direct.py's rule)."""
    names = {m.id: tuple(localized(m.card.metadata.name, lang) for lang in ("ja", "en")) for m in members}
    return named_companion(turn.message, [m.id for m in members], names, user_id=turn.user_id)


def joint_messages(members: Sequence[Companion], base: Companion, turn: TurnContext) -> list[ChatMessage]:
    """The joint vote's prompt, in the language of ``turn``'s message: the ``base`` member's context (its persona
    and the conversation as it heard it: the shared context, once; :func:`base_member`), then the ballot: every
    member in one line, who votes, who was named, and the closing stage the framework pushes toward."""
    language = reply_language(turn.message, base.language)
    ids = [m.id for m in members]
    named = named_member(members, turn)
    ballot = "\n".join((joint_vote_members_prompt(language, [member_line(m, language) for m in members]),
                        joint_vote_prompt(language, ids, [named] if named else [], turn.closing_hint)))
    return [*base.context(language), ChatMessage.system(ballot)]


@dataclass(eq=False)
class _Member:
    companion: Companion
    turn: TurnContext
    settled: asyncio.Event = field(default_factory=asyncio.Event)  # caught up on the turn, or left
    left: bool = False
    vote: asyncio.Future[Vote | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class JointBallot:
    """The votes of one round's companions on one endpoint (see the module's docstring); made by :func:`join`."""

    def __init__(self, slots: int | None) -> None:
        self._slots = slots
        self._members: dict[str, _Member] = {}
        self._request: asyncio.Task[None] | None = None

    def add(self, companion: Companion, turn: TurnContext) -> Seat:
        member = _Member(companion, turn)
        member.vote.add_done_callback(_retrieved)
        self._members[companion.id] = member
        return Seat(self, member)

    def close(self) -> None:
        """Every vote of the round has joined: the members vote alone, or one request decides them all."""
        members = list(self._members.values())
        if len(members) == 1 or self._slots is None or self._slots >= len(members):
            for member in members:
                member.vote.set_result(None)
            return
        self._request = asyncio.get_running_loop().create_task(self._decide(members),
                                                               name=f"joint-vote:{members[0].turn.turn_id}")

    async def _decide(self, members: list[_Member]) -> None:
        await asyncio.gather(*(m.settled.wait() for m in members))
        voting = [m for m in members if not m.left]
        if not voting:
            return
        try:
            votes = await self._ask(voting)
        except Exception as exc:  # each member's ballot shows it as invalid
            for member in voting:
                if not member.vote.done():
                    member.vote.set_exception(exc)
            return
        for member in voting:
            if not member.vote.done():
                member.vote.set_result(votes[member.companion.id])

    async def _ask(self, members: list[_Member]) -> dict[str, Vote]:
        """One request, through the model of the member whose prompt it begins with."""
        companions = [m.companion for m in members]
        turn = members[0].turn
        base = base_member(companions, turn)
        ids = [c.id for c in companions]
        model = answer_model(ids)
        answer = await generate_structured(base.model, joint_messages(companions, base, turn), model,
                                           default=model({}), counter=base.structured_stats, name=JOINT_VOTE_NAME,
                                           max_tokens=answer_tokens(len(ids)))
        log.debug("joint vote of %s: %s", ", ".join(ids), answer.root)
        return answer_votes(answer.root, ids, named_member(companions, turn))

    def leave(self, member: _Member) -> None:
        member.left = True
        member.settled.set()
        if self._request is not None and all(m.left for m in self._members.values()):
            self._request.cancel()


def _retrieved(future: asyncio.Future[Vote | None]) -> None:
    """Marks a failed joint vote's exception as seen (its member may have left before it came)."""
    if not future.cancelled():
        future.exception()


class Seat:
    """A companion's place in a joint ballot: :meth:`vote` once it has caught up on the turn."""

    def __init__(self, ballot: JointBallot, member: _Member) -> None:
        self._ballot = ballot
        self._member = member

    async def vote(self) -> Vote | None:
        """This companion's vote from the joint request, or ``None`` when it votes alone. Cancelling it leaves the
        joint request to the other members."""
        self._member.settled.set()
        try:
            return await asyncio.shield(self._member.vote)
        except asyncio.CancelledError:
            self.leave()
            raise

    def leave(self) -> None:
        """This companion's ballot ended before it voted (cancelled, or it failed catching up)."""
        self._ballot.leave(self._member)


_gathering: dict[tuple[Ballots, Hashable], JointBallot] = {}


def join(companion: Companion, turn: TurnContext) -> Seat | None:
    """``companion``'s seat in the joint ballot of ``turn``'s round on its endpoint (``None`` outside a round: it
    votes alone). Call it before awaiting anything: the ballot closes once every ballot started with this one ran
    up to here."""
    if turn.ballots is None:
        return None
    endpoint, slots = endpoint_of(companion.model)
    key = (turn.ballots, endpoint)
    ballot = _gathering.get(key)
    if ballot is None:
        ballot = _gathering[key] = JointBallot(slots)

        def close() -> None:
            del _gathering[key]
            ballot.close()

        asyncio.get_running_loop().call_soon(close)
    return ballot.add(companion, turn)
