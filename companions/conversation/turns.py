"""One turn's vote phase: who is addressed, parallel votes, and the deadline that keeps a turn from stalling.

Votes run concurrently; each arrives through ``on_vote`` as soon as it is in. The phase ends when every vote is
in or when the deadline passes, whichever is first. A vote that is late, raises, or is not a :class:`Vote` counts
as ``listen`` and is reported as ``missing`` or ``invalid``. A participant that ignores cancellation cannot hold
the turn either: its task is handed to the owner's :class:`TaskSet` and the turn goes on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Reversible
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from companions.conversation.participant import LISTEN, Vote, VoteNeverComes
from companions.protocol import Message
from companions.tasks import TaskSet

log = logging.getLogger(__name__)

VoteStatus: TypeAlias = Literal["pending", "voted", "missing", "invalid", "muted"]
TurnPhase: TypeAlias = Literal["voting", "composing", "waiting", "speaking", "done", "cancelled", "ended"]
CANCEL_GRACE_S: Final = 0.05


@dataclass(frozen=True)
class VoteOutcome:
    """How a voter's vote ended; ``vote`` is what selection uses (``listen`` unless ``status == "voted"``)."""

    voter: str
    status: VoteStatus
    vote: Vote
    error: str = ""
    latency_s: float = 0.0


def addressees(message: Message, present: Iterable[str], user_id: str) -> tuple[str, ...]:
    """The present companions a message is addressed to, sorted by id; the sender never votes on its own words.

    An empty ``to`` means everyone present (the reference's user messages; a companion's message to nobody in
    particular is treated the same way).
    """
    present_ids = sorted(set(present))
    sender = message.params.from_
    to = set(message.params.to)
    if not to:
        return tuple(p for p in present_ids if p != sender)
    return tuple(p for p in present_ids if p in to and p not in (sender, user_id))


def heard_since(history: Reversible[tuple[int, Message]], since: int, limit: int) -> tuple[Message, ...]:
    """The messages of ``history`` (``(sequence number, message)``, oldest first) from ``since`` on, at most the
    newest ``limit``: what a participant that joined at ``since`` heard."""
    heard: list[Message] = []
    for seq, message in reversed(history):  # newest first, so a long history costs nothing extra
        if seq < since or len(heard) >= limit:
            break
        heard.append(message)
    return tuple(reversed(heard))


def only_companion_addressed(message: Message, who: str, user_id: str) -> bool:
    """``who`` is the one companion the message's ``to`` names (asked directly, not one of a crowd)."""
    companions = {t for t in message.params.to if t != user_id}
    return companions == {who}


async def collect_votes(
    ballots: Mapping[str, Callable[[], Awaitable[Vote]]],
    *,
    deadline_s: float,
    owner: TaskSet,
    on_vote: Callable[[VoteOutcome], None] | None = None,
    deadlines: Mapping[str, float] | None = None,
    settle: asyncio.Future[str] | None = None,
) -> dict[str, VoteOutcome]:
    """Runs every ballot at once and returns each voter's outcome by its deadline.

    ``deadlines`` gives some voters a deadline of their own (a companion elsewhere, whose vote its own node
    judges); the others have ``deadline_s``. A vote is ``missing`` as soon as its own deadline passes, while the
    round waits for the voters that still have time. When ``settle`` gets a result (the companion that took the
    turn elsewhere: it is decided already), the votes still awaited are ``missing`` at once. Cancelling the caller
    cancels every ballot still running.
    """
    started = time.monotonic()
    outcomes: dict[str, VoteOutcome] = {}
    limit = {voter: max(0.0, (deadlines or {}).get(voter, deadline_s)) for voter in ballots}

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
