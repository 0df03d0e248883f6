"""One turn's vote round, and the rule that lets every node of a network decide the same turn from the same facts.

Each node of the network (companions/network) runs its own manager on the same messages, and every node must pick
the same speaker. A deadline alone cannot give that: a vote that arrives just before the deadline on one node and
just after it on another (the network's delay, or a node whose model server needs a longer adaptive deadline) would
count on one and be missing on the other. So a vote is judged where it is cast:

- **A companion's own node judges its vote.** It closes the ballot of each of its companions at its own deadline
  and publishes exactly one State for it per turn (``messageId``): the vote, or ``listen`` when the vote was late,
  unreadable, the companion is muted there, or that node's turn cap ended its conversation (:func:`abstain`).
  That State is the fact every node uses.
- **Other nodes wait for that State**, not for their own deadline: a remote companion's vote is awaited until it
  arrives, or its peer leaves (a missing vote at once), bounded by ``remote_vote_wait_s`` (the longest deadline any
  node may set, plus delivery) for a node that never votes at all.

Every node then holds the same votes and :func:`~companions.conversation.selection.select_speaker` is a pure
function of them. (The reference's nodes wait for every addressed companion's State without any bound; a
reference node always votes on a message naming its companion.)

- **A line settles the turn.** Should a companion elsewhere say its line while this node still waits for votes
  (its node had them all; a State lost on the way, or nodes that differ in what their user muted), the votes still
  awaited are not needed: the line's speaker takes the turn here too (``settle``, rule ``settled``), and the
  conversation goes on from its line on every node.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping

from companions.bus import Bus
from companions.conversation.calls import ParticipantCalls
from companions.conversation.config import ConversationConfig
from companions.conversation.direct import vote_deadline
from companions.conversation.participant import LISTEN, Participant, TurnContext, Vote, described
from companions.conversation.readmodel import TurnView, VoteView, evolve
from companions.conversation.turns import VoteOutcome, collect_votes
from companions.protocol import State


def publish_vote(bus: Bus, voter: str, turn_id: str, vote: Vote) -> None:
    """Puts ``voter``'s State for the turn on the bus (and from there on the network)."""
    bus.publish(State.create(from_=voter, message_id=turn_id, state=vote.state, importance=vote.importance,
                             selected=vote.selected, closing=vote.closing))


def abstain(bus: Bus, turn_id: str, addressed: Iterable[Participant], *, networked: bool) -> None:
    """This node takes no vote round on the turn though other nodes may (its turn cap was reached: the nodes'
    settings may differ): each of its companions the turn addresses says ``listen``, so that no node waits for
    them. Nothing is said without companions elsewhere (``networked``)."""
    if networked:
        for participant in addressed:
            if not described(participant).remote:
                publish_vote(bus, participant.id, turn_id, LISTEN)


async def vote_round(turn: TurnView, voters: Mapping[str, Participant], contexts: Mapping[str, TurnContext], *,
                     silent: Iterable[str], bus: Bus, calls: ParticipantCalls, config: ConversationConfig,
                     update: Callable[..., None], settle: asyncio.Future[str] | None = None,
                     ) -> tuple[TurnView, dict[str, Vote]]:
    """Every voter votes; returns the turn's view with their votes, and the votes (``listen`` for a missing or
    invalid one).

    ``silent`` are this node's companions the turn addresses but that do not vote (muted here): their ``listen``
    is published so that other nodes do not wait for them. ``update(change, turn=...)`` shows each vote as it comes.
    ``settle`` ends the round early (a line for the turn came from elsewhere: see the module's docstring).
    """
    turn_id = turn.turn_id
    for companion in silent:
        publish_vote(bus, companion, turn_id, LISTEN)
    turn = evolve(turn, votes=tuple(VoteView(v, "pending") for v in voters))
    update("turn", turn=turn)
    remote = {v for v, p in voters.items() if described(p).remote}
    paces = [pace for v, p in voters.items() if v not in remote and (pace := described(p).pace()) is not None]
    deadline = vote_deadline(paces, config.vote_deadline_s)

    def on_vote(outcome: VoteOutcome) -> None:
        nonlocal turn
        if outcome.voter not in remote:  # a remote companion's State came from the network: it is on the bus
            publish_vote(bus, outcome.voter, turn_id, outcome.vote)
        turn = evolve(turn, votes=tuple(VoteView.of(outcome) if x.companion == outcome.voter else x
                                        for x in turn.votes))
        update("vote", turn=turn)

    def ballot(voter: str) -> Callable[[], Awaitable[Vote]]:
        return lambda: calls.tracked(voter, voters[voter].vote(contexts[voter]))

    ballots = {v: ballot(v) for v in voters}
    outcomes = await collect_votes(ballots, deadline_s=deadline, owner=calls.tasks, on_vote=on_vote, settle=settle,
                                   deadlines={v: max(deadline, config.remote_vote_wait_s) for v in remote})
    return turn, {v: o.vote for v, o in outcomes.items()}
