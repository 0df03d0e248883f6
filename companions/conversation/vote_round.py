"""One turn's vote round: every addressed companion votes at once, by its deadline, and the rule that lets every node
of a network decide the same turn from the same facts.

Votes run concurrently: the round starts every ballot at once, and each voter's ``TurnContext`` carries the round's
:class:`~companions.conversation.participant.Ballots`, so that voters whose model endpoint answers one request at a
time can have one request decide their votes together (companions/companion/joint_vote.py; the deadline counts that
request: deadline.py). Each vote arrives through ``on_vote`` as soon as it is in. The round ends when every vote is in
or each voter's deadline (deadline.py) passed, whichever is first. A vote that is late, raises, or is not a
:class:`~companions.conversation.ballot.Vote` counts as ``listen`` and is reported as ``missing`` or ``invalid``;
one known never to come (``VoteNeverComes``) is ``missing`` at once. A participant that ignores cancellation cannot
hold the turn either: its task is handed to the owner's :class:`~companions.common.tasks.TaskSet` and the turn goes on.

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
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Final

from companions.common.tasks import TaskSet
from companions.conversation.ballot import LISTEN, Vote, VoteNeverComes, VoteOutcome
from companions.conversation.calls import ParticipantCalls
from companions.conversation.config import ConversationConfig
from companions.conversation.deadline import vote_deadlines
from companions.conversation.participant import Ballots, Participant, TurnContext
from companions.conversation.readmodel import TurnView, VoteView, evolve
from companions.wire.bus import Bus

log = logging.getLogger(__name__)
CANCEL_GRACE_S: Final = 0.05


async def collect_votes(
    ballots: Mapping[str, Callable[[], Awaitable[Vote]]],
    *,
    deadlines: Mapping[str, float],
    owner: TaskSet,
    on_vote: Callable[[VoteOutcome], None] | None = None,
    settle: asyncio.Future[str] | None = None,
) -> dict[str, VoteOutcome]:
    """Runs every ballot at once and returns each voter's outcome by its deadline.

    ``deadlines`` gives each voter's deadline in seconds from now (deadline.py decides them). A vote is ``missing``
    as soon as its own deadline passes, while the round waits for the voters that still have time. When ``settle``
    gets a result (the companion that took the turn elsewhere: it is decided already), the votes still awaited are
    ``missing`` at once. Cancelling the caller cancels every ballot still running.
    """
    started = time.monotonic()
    outcomes: dict[str, VoteOutcome] = {}
    limit = {voter: max(0.0, deadlines[voter]) for voter in ballots}

    def finish(outcome: VoteOutcome) -> None:
        if outcome.voter in outcomes:
            return
        outcomes[outcome.voter] = outcome
        if on_vote is not None:
            try:
                on_vote(outcome)
            except Exception:
                log.exception("vote observer failed on %s", outcome.voter)

    def done(voter: str, task: asyncio.Task[Vote | VoteNeverComes]) -> None:
        latency = time.monotonic() - started
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            finish(VoteOutcome(voter, "invalid", LISTEN, f"{type(exc).__name__}: {exc}", latency))
            return
        result = task.result()
        if isinstance(result, VoteNeverComes):
            finish(VoteOutcome(voter, "missing", LISTEN, f"{type(result).__name__}: {result}", latency))
        elif isinstance(result, Vote):
            finish(VoteOutcome(voter, "voted", result, "", latency))
        else:
            finish(VoteOutcome(voter, "invalid", LISTEN, f"not a Vote: {type(result).__name__}", latency))

    async def ballot(make: Callable[[], Awaitable[Vote]]) -> Vote | VoteNeverComes:
        try:
            return await make()
        except VoteNeverComes as never:  # expected (a peer gone, a silent companion): a value, not a task failure
            return never

    tasks: dict[asyncio.Task[Vote | VoteNeverComes], str] = {}
    for voter, make in ballots.items():
        task = owner.spawn(ballot(make), name=f"vote:{voter}")
        task.add_done_callback(functools.partial(done, voter))
        tasks[task] = voter
    late: list[asyncio.Task[Vote | VoteNeverComes]] = []

    def settled(future: asyncio.Future[str]) -> None:
        why = f"the turn went to {future.result()}" if not future.cancelled() else "the round was settled"
        for task in [t for t in tasks if not t.done()]:
            task.cancel()
            late.append(task)
            finish(VoteOutcome(tasks[task], "missing", LISTEN, f"not needed: {why}", time.monotonic() - started))

    if settle is not None:
        settle.add_done_callback(settled)
    try:
        waiting = list(tasks)
        while waiting:
            elapsed = time.monotonic() - started
            for task in [t for t in waiting if not t.done() and limit[tasks[t]] <= elapsed]:
                task.cancel()
                late.append(task)
                voter = tasks[task]
                finish(VoteOutcome(voter, "missing", LISTEN, f"no vote within {limit[voter]:g} s", elapsed))
            waiting = [t for t in waiting if not t.done() and t not in late]
            if waiting:
                # Until every vote still awaited is in, or the earliest deadline among them passes.
                await asyncio.wait(waiting, timeout=min(limit[tasks[t]] for t in waiting) - elapsed)
    finally:
        pending = [t for t in tasks if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            # Give cancelled ballots a moment to unwind; one that ignores cancellation stays with the owner.
            _, stuck = await asyncio.wait(pending, timeout=CANCEL_GRACE_S)
            for task in stuck:
                log.warning("vote of %s ignores cancellation; the turn goes on without it", tasks[task])
        if settle is not None:
            settle.remove_done_callback(settled)
    elapsed = time.monotonic() - started
    for voter in ballots:  # a ballot cancelled from elsewhere (its owner closing)
        if voter not in outcomes:
            finish(VoteOutcome(voter, "missing", LISTEN, "the vote was cancelled", elapsed))
    return {voter: outcomes[voter] for voter in ballots}


def publish_vote(bus: Bus, voter: str, turn_id: str, vote: Vote) -> None:
    """Puts ``voter``'s State for the turn on the bus (and from there on the network)."""
    bus.publish(vote.to_state(voter, turn_id))


def abstain(bus: Bus, turn_id: str, addressed: Iterable[Participant], *, networked: bool) -> None:
    """This node takes no vote round on the turn though other nodes may (its turn cap was reached: the nodes'
    settings may differ): each of its companions the turn addresses says ``listen``, so that no node waits for
    them. Nothing is said without companions elsewhere (``networked``)."""
    if networked:
        for participant in addressed:
            if not participant.description.remote:
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
    remote = {v for v, p in voters.items() if p.description.remote}
    deadlines = vote_deadlines({v: p.description for v, p in voters.items()}, base_s=config.vote_deadline_s,
                               remote_wait_s=config.remote_vote_wait_s)

    def on_vote(outcome: VoteOutcome) -> None:
        nonlocal turn
        if outcome.voter not in remote:  # a remote companion's State came from the network: it is on the bus
            publish_vote(bus, outcome.voter, turn_id, outcome.vote)
        turn = evolve(turn, votes=tuple(VoteView.of(outcome) if x.companion == outcome.voter else x
                                        for x in turn.votes))
        update("vote", turn=turn)

    ballots_of_round = Ballots(turn_id, tuple(voters))
    joined = {v: dataclasses.replace(contexts[v], ballots=ballots_of_round) for v in voters}

    def ballot(voter: str) -> Callable[[], Awaitable[Vote]]:
        return lambda: calls.tracked(voter, voters[voter].vote(joined[voter]))

    ballots = {v: ballot(v) for v in voters}
    outcomes = await collect_votes(ballots, deadlines=deadlines, owner=calls.tasks, on_vote=on_vote, settle=settle)
    return turn, {v: o.vote for v, o in outcomes.items()}
