"""Task ownership: every background task belongs to a :class:`TaskSet` that cancels and awaits it on close."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class TaskSet:
    """A kept set of tasks. Failures are logged (never lost); ``aclose`` cancels in reverse start order."""

    def __init__(self, name: str = "tasks") -> None:
        self.name = name
        self._tasks: dict[asyncio.Task[Any], None] = {}  # insertion-ordered set
        self._closed = False
        self.failures = 0

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        if self._closed:
            coro.close()
            raise RuntimeError(f"{self.name} is closed")
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks[task] = None
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.pop(task, None)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.failures += 1
            log.error("%s: task %s failed", self.name, task.get_name(), exc_info=exc)

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` began: nothing more may be spawned."""
        return self._closed

    async def wait(self) -> None:
        """Waits until every task (those spawned meanwhile too) has finished, whatever its outcome."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def cancel(self) -> None:
        """Cancels every task without waiting (for synchronous callers such as a window's close event)."""
        for task in reversed(list(self._tasks)):
            task.cancel()

    async def cancel_all(self) -> None:
        """Cancels every task, newest first, and waits for each to finish."""
        for task in reversed(list(self._tasks)):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def aclose(self) -> None:
        self._closed = True
        await self.cancel_all()
