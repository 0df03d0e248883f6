"""The server's slots: how many requests run at once, the FIFO queue of the rest, and each slot's prompt cache."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass

from companions.llm.capabilities import common_prefix
from companions.testing.openai_server.profiles import ServerProfile, estimate_tokens


@dataclass
class Slot:
    """One place a request runs in; ``last_prompt`` is what its prompt cache holds."""

    index: int
    last_prompt: str = ""
    busy: bool = False


@dataclass(frozen=True)
class Admission:
    """A request's slot and what its prompt costs there."""

    slot: Slot
    prompt_tokens: int
    cached_tokens: int


class SlotPool:
    """Hands out slots in arrival order; with ``profile.slots`` None there is always one free."""

    def __init__(self, profile: ServerProfile) -> None:
        self.profile = profile
        self._slots = [Slot(i) for i in range(profile.slots or 0)]
        self._waiting: deque[asyncio.Future[Slot]] = deque()

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot."""
        return sum(1 for f in self._waiting if not f.done())

    @contextlib.asynccontextmanager
    async def admitted(self, prompt: str) -> AsyncIterator[Admission]:
        """Waits for a slot (FIFO) and holds it; the prompt's cost is counted against that slot's cache."""
        slot = await self._acquire(prompt)
        try:
            cached = common_prefix(slot.last_prompt, prompt) if self.profile.prompt_cache else 0
            total = estimate_tokens(prompt)
            uncached = estimate_tokens(prompt[cached:])
            slot.last_prompt = prompt
            yield Admission(slot, total, max(0, total - uncached))
        finally:
            self._release(slot)

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Waits for a slot (FIFO) and holds it without a prompt: its cache keeps what it held."""
        slot = await self._acquire("")
        try:
            yield
        finally:
            self._release(slot)

    async def _acquire(self, prompt: str) -> Slot:
        free = [s for s in self._slots if not s.busy]
        if self.profile.slots is None and not free:
            free = [Slot(len(self._slots))]
            self._slots.append(free[0])
        if free and not self._waiting:
            best = max(free, key=lambda s: (common_prefix(s.last_prompt, prompt), -s.index))
            best.busy = True
            return best
        future: asyncio.Future[Slot] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release(future.result())  # handed over just as the waiter went away
            else:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(future)
            raise

    def _release(self, slot: Slot) -> None:
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_result(slot)  # handed over directly: the slot stays busy, nobody can jump the queue
                return
        slot.busy = False
