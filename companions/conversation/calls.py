"""Participant calls as owned, bounded tasks: nothing a participant does can stall the conversation or shutdown."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from companions.common.tasks import TaskSet

T = TypeVar("T")


class CallFailed(Exception):
    """A bounded participant call did not produce a value (timeout or error); ``timed_out``: it ran out of time."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class ParticipantCalls:
    """Runs participant calls as tasks owned by ``tasks`` and knows who has a call in flight (``busy``)."""

    def __init__(self, tasks: TaskSet) -> None:
        self.tasks = tasks
        self.busy: set[str] = set()

    async def bounded(self, who: str, call: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Runs ``call`` as an owned task, bounded by ``timeout``; cancelling the caller cancels it.

        The caller never waits for a call that ignores cancellation: the task stays with ``tasks``. A timeout,
        a cancellation from elsewhere or an exception of the call is raised as :class:`CallFailed`.
        """
        task = self.tasks.spawn(call, name=f"call:{who}")
        self.busy.add(who)
        try:
            done, _ = await asyncio.wait([task], timeout=timeout)
        finally:
            self.busy.discard(who)
            if not task.done():
                task.cancel()
        if not done:
            raise CallFailed(f"no answer within {timeout:g} s", timed_out=True)
        if task.cancelled():
            raise CallFailed("cancelled")
        exc = task.exception()
        if exc is not None:
            raise CallFailed(f"{type(exc).__name__}: {exc}")
        return task.result()

    async def tracked(self, who: str, call: Awaitable[T]) -> T:
        """Awaits ``call`` in the caller's own task, ``who`` counted as busy meanwhile: for a caller that already
        runs it as an owned, bounded task (a vote: ``collect_votes``), so the call costs no second task."""
        self.busy.add(who)
        try:
            return await call
        finally:
            self.busy.discard(who)
