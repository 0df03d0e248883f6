"""How long each vote of a round may take: the one place the vote deadline is decided.

A vote round must not stall a turn, and it must not cut off a companion whose model server is slow. So:

- **This app's companions** (and bridge guests and test doubles: every participant whose vote this node judges)
  share one deadline: the configured ``vote_deadline_s``, or longer when their model endpoints are measured (or
  known) to need longer: one vote's time with none of its prompt in the server's cache (``Pace.vote_bound_s``: a
  prompt cache makes most requests faster than that, not the one after another companion's), times how many votes
  queue on the same endpoint (the rounds of its slots), with a margin of 1.5x plus a second, never above
  :data:`MAX_DEADLINE_S`. Where one request decides the votes of an endpoint's voters (a joint ballot: more voters
  there than slots, companions/companion/joint_vote.py) nothing queues: that one request, lengthened by each further
  voter's entry. An endpoint that runs one request at a time and was not measured yet counts
  :data:`UNMEASURED_SERIAL_VOTE_S` a vote (and :data:`UNMEASURED_JOINT_VOTER_S` a further voter's entry in a joint
  ballot).
- **A companion elsewhere** (companions/network) is judged by its own node, which publishes exactly one State per
  turn (vote_round.py): it is awaited until that State comes, or its peer leaves, bounded by ``remote_vote_wait_s``
  (the longest deadline any node may set, plus delivery) for a node that never votes at all.

The same estimate of a round's length tells direct.py whether a user's message to everyone is answered at once
(:func:`vote_round_s`, :func:`serial`). vote_round.py enforces the deadlines given here.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Mapping, Sequence
from typing import Final

from companions.conversation.participant import Description, Pace

MAX_DEADLINE_S: Final = 90.0
UNMEASURED_SERIAL_VOTE_S: Final = 8.0  # one cold vote on a slow local server, before anything was measured
UNMEASURED_JOINT_VOTER_S: Final = 2.0  # one more voter's entry in a joint ballot there (~60 tokens at ~30/s)


def _groups(paces: Sequence[Pace]) -> list[list[Pace]]:
    """The voters' paces per endpoint (the voters whose requests queue there together)."""
    groups: dict[str, list[Pace]] = collections.defaultdict(list)
    for pace in paces:
        groups[pace.endpoint].append(pace)
    return list(groups.values())


def joint(group: Sequence[Pace]) -> bool:
    """Whether one request decides the votes of ``group`` (the voters of one endpoint): they take part in joint
    ballots and are more than the endpoint's slots."""
    first = group[0]
    return first.joint and len(group) > 1 and first.slots is not None and first.slots < len(group)


def _endpoint_s(group: Sequence[Pace], vote_s: float, voter_s: float) -> float:
    """How long the votes of one endpoint's voters take, one vote taking ``vote_s``: a joint ballot is one request
    that each voter beyond the first lengthens by ``voter_s``; otherwise the votes run in rounds of its slots."""
    if joint(group):
        return vote_s + (len(group) - 1) * voter_s
    slots = group[0].slots
    return (math.ceil(len(group) / slots) if slots else 1) * vote_s


def vote_round_s(paces: Sequence[Pace], *, bound: bool = False) -> float | None:
    """The estimated time of a vote round by these voters (``None`` if some endpoint's speed is not known);
    ``bound``: the longest it may take, none of its prompts cached (``Pace.vote_bound_s``)."""
    longest = 0.0
    for group in _groups(paces):
        pace = group[0]
        vote_s = pace.vote_bound_s if bound and pace.vote_bound_s is not None else pace.vote_s
        if vote_s is None:
            return None
        voter_s = pace.joint_voter_s if pace.joint_voter_s is not None else UNMEASURED_JOINT_VOTER_S
        longest = max(longest, _endpoint_s(group, vote_s, voter_s))
    return longest


def serial(paces: Sequence[Pace]) -> bool:
    """Some voter's endpoint runs one request at a time."""
    return any(p.slots == 1 for p in paces)


def vote_deadline(paces: Sequence[Pace], base_s: float) -> float:
    """The vote deadline for these voters: ``base_s`` unless their endpoints are measured (or known) to need longer."""
    if not paces:
        return base_s
    estimate = vote_round_s(paces, bound=True)
    if estimate is None:
        if not serial(paces):
            return base_s
        estimate = max(_endpoint_s(group, UNMEASURED_SERIAL_VOTE_S, UNMEASURED_JOINT_VOTER_S)
                       for group in _groups(paces))
    return min(MAX_DEADLINE_S, max(base_s, 1.5 * estimate + 1.0))


def vote_deadlines(voters: Mapping[str, Description], *, base_s: float, remote_wait_s: float) -> dict[str, float]:
    """Each voter's deadline in seconds from the round's start: the judged voters' common one (from their endpoints'
    pace), and for a companion elsewhere the wait for its node's State (never shorter than the common one)."""
    paces = [pace for d in voters.values() if not d.remote and (pace := d.pace()) is not None]
    judged = vote_deadline(paces, base_s)
    return {voter: max(judged, remote_wait_s) if d.remote else judged for voter, d in voters.items()}
