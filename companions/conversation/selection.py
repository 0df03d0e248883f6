"""Who speaks next: what makes a vote ``selected``, and one pure, deterministic function of the votes.

A companion that the message names alone is ``selected`` whatever its model said, and its vote is never less closed
than the stage the framework pushes toward (:func:`counted`): being asked directly is known without a model.

Every node that sees the same votes picks the same speaker, whatever order the votes arrived in (the reference
framework broke ties by arrival order, so nodes disagreed). Rules, in order:

1. A forced companion (user control) speaks, if it is eligible.
2. Candidates are the companions that were selected (named / asked directly) or want to speak.
3. Selected before speak-only; then ``speak`` before ``listen``; then higher importance; then fewer recent turns
   (this spreads the floor); then the id (a stable, total order).
4. The previous speaker is never picked twice in a row, unless it was selected by name or is the only candidate.

The result is the whole ranking, so a speaker that fails to compose passes the floor to the next one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from companions.conversation.ballot import Vote
from companions.conversation.closing import later_stage
from companions.conversation.participant import TurnContext

SelectionRule: TypeAlias = Literal["forced", "named", "wants", "spread", "first", "answers-user", "settled", "nobody"]
"""Which rule chose the speaker: the user forced it, it was named, it wants the floor most, the previous speaker
stepped aside for it (rule 4), it answers a user's message first without a vote round because a vote round would
be slow on its model server (direct.py), it answers the user's message every companion voted to listen to
(direct.py), it spoke already, chosen by the votes another node had (vote_round.py), or nobody wants the floor.
A view renders it in its own language."""


@dataclass(frozen=True)
class Selection:
    """The outcome: ``speaker`` is ``ranking[0]`` (``None`` when nobody wants the floor); ``reason`` says why in
    English (logs), ``rule`` says it as a value."""

    ranking: tuple[str, ...]
    reason: str
    rule: SelectionRule

    @property
    def speaker(self) -> str | None:
        return self.ranking[0] if self.ranking else None


def counted(vote: Vote, turn: TurnContext) -> Vote:
    """``vote`` as the turn counts it: ``selected`` when the turn's message names this companion alone
    (``turn.addressed_directly``), and at least as closed as ``turn.closing_hint``. A vote from a companion
    elsewhere is counted by its own node (vote_round.py): it comes as that node published it."""
    closing = later_stage(vote.closing, turn.closing_hint)
    selected = vote.selected or turn.addressed_directly
    if (selected, closing) == (vote.selected, vote.closing):
        return vote
    return vote.model_copy(update={"selected": selected, "closing": closing})


def rank_key(voter: str, vote: Vote, recent_turns: Mapping[str, int]) -> tuple[int, int, int, int, str]:
    """The sort key of a candidate; smaller is earlier. Total because ids are unique."""
    return (
        0 if vote.selected else 1,
        0 if vote.state == "speak" else 1,
        -vote.importance,
        recent_turns.get(voter, 0),
        voter,
    )


def select_speaker(
    votes: Mapping[str, Vote],
    *,
    recent_turns: Mapping[str, int] | None = None,
    previous_speaker: str | None = None,
    forced: str | None = None,
    eligible: frozenset[str] | None = None,
) -> Selection:
    """Ranks the candidates for the next turn.

    Args:
        votes: each voter's vote (missing / invalid votes should already be ``listen``).
        recent_turns: how many of the recent turns each companion held (fewer wins a tie).
        previous_speaker: who held the last turn (not picked again unless named or alone).
        forced: a companion the user asked to speak next; it leads the ranking when eligible.
        eligible: who may speak at all (present and unmuted); ``None`` means every voter.
    """
    recent = recent_turns or {}
    allowed = eligible if eligible is not None else frozenset(votes)
    candidates = [v for v, vote in votes.items() if v in allowed and (vote.selected or vote.state == "speak")]
    candidates.sort(key=lambda v: rank_key(v, votes[v], recent))
    if forced is not None and forced in allowed:
        rest = tuple(c for c in candidates if c != forced)
        return Selection((forced, *rest), f"{forced} was asked to speak next", "forced")
    if not candidates:
        return Selection((), "nobody wants to speak", "nobody")
    if (
        candidates[0] == previous_speaker
        and len(candidates) > 1
        and not votes[candidates[0]].selected
    ):
        candidates.append(candidates.pop(0))
        return Selection(tuple(candidates), f"{candidates[0]} speaks; {previous_speaker} just spoke", "spread")
    top = votes[candidates[0]]
    if top.selected:
        return Selection(tuple(candidates), f"{candidates[0]} was named", "named")
    return Selection(tuple(candidates), f"{candidates[0]} wants to speak (importance {top.importance})", "wants")


def settled_by(selection: Selection, speaker: str) -> Selection:
    """``selection`` with ``speaker`` first: a companion elsewhere said its line for the turn while this node still
    waited for votes (another node had them all and chose it), so every node follows that line."""
    rest = tuple(c for c in selection.ranking if c != speaker)
    return Selection((speaker, *rest), f"{speaker} spoke first, chosen on another node", "settled")
