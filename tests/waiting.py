"""Waiting in tests for something that has no event of its own to await: one helper for code on an event loop, one
for code outside any loop (a test driving other processes).

Prefer awaiting the real thing (a future, an event, a signal: ``tests.ui.conftest.signal_fired``,
``tests.ui.scripted_runtime.until``) where the code under test offers one; poll only what offers nothing to wait on.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _described(condition: Callable[[], object]) -> str:
    """The condition's own source (for a lambda, the line that states it), else its name."""
    try:
        return " ".join(inspect.getsource(condition).split())
    except (OSError, TypeError):
        return getattr(condition, "__qualname__", repr(condition))


async def wait_until(condition: Callable[[], object], what: str | None = None, *, timeout: float = 5.0,
                     changed: asyncio.Event | None = None, every: float = 0.01) -> None:
    """Returns once ``condition()`` holds; raises TimeoutError naming ``what`` (by default the condition's source)
    if it does not within ``timeout`` seconds.

    Checks now, then every ``every`` seconds, or sooner when ``changed`` is set (it is cleared before each check, so
    a change made while the condition is read is not lost). ``every=0`` only lets other tasks run between checks.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if changed is not None:
            changed.clear()
        if condition():
            return
        left = deadline - loop.time()
        if left <= 0:
            raise TimeoutError(f"waited {timeout:g} s in vain for: {what or _described(condition)}")
        if changed is None:
            await asyncio.sleep(min(every, left))
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(every, left))


def eventually(probe: Callable[[], T], ok: Callable[[T], bool], timeout: float = 15.0, every: float = 0.1) -> T:
    """Outside an event loop: ``probe()`` once its value satisfies ``ok``, else its last value after ``timeout``
    seconds (the caller asserts on it, so the failure shows what was seen)."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not ok(value) and time.monotonic() < deadline:
        time.sleep(every)
        value = probe()
    return value
