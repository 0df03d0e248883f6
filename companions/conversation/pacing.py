"""Pacing: one speech at a time, no fixed sleeps.

The floor holder's speech runs as an owned task. The next speaker may compose while it plays, but publishes its
message only after :meth:`Floor.wait_clear` returns, i.e. when the previous speech has finished (or failed, or
was cut off). Nothing waits on a timer: the end of a speech is what lets the next one start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from companions.common.tasks import TaskSet

log = logging.getLogger(__name__)


class Floor:
    """Who is speaking now, and the task of that speech. ``on_change(holder)`` fires when the holder changes."""

    def __init__(self, owner: TaskSet, on_change: Callable[[str | None], None] | None = None) -> None:
        self._owner = owner
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self.holder: str | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def _set_holder(self, holder: str | None) -> None:
        if holder != self.holder:
            self.holder = holder
            if self._on_change is not None:
                self._on_change(holder)

    def start(self, speaker: str, speech: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Starts ``speaker``'s speech. The floor must be clear (call :meth:`wait_clear` first)."""
        if self.busy:
            speech.close()
            raise RuntimeError(f"{self.holder} still holds the floor")
        self._set_holder(speaker)
        task = self._owner.spawn(self._run(speech), name=f"speech:{speaker}")
        self._task = task
        return task

    async def _run(self, speech: Coroutine[Any, Any, None]) -> None:
        try:
            await speech
        except asyncio.CancelledError:
            raise
        except Exception:
            # A failed speech (no audio device, TTS error) ends the speech, not the conversation.
            log.exception("speech of %s failed", self.holder)
        finally:
            if self._task is asyncio.current_task():
                self._task = None
                self._set_holder(None)

    async def wait_clear(self) -> None:
        """Returns once no speech is playing. Cancelling the waiter does not cancel the speech."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait([task])

    async def cut(self) -> str | None:
        """Cuts the current speech off; returns who was speaking (``None`` if nobody)."""
        task, holder = self._task, self.holder
        self._task = None
        self._set_holder(None)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            return holder
        return None
