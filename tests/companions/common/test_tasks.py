from __future__ import annotations

import asyncio
import logging

import pytest

from companions.common.tasks import TaskSet


async def test_tasks_are_cancelled_newest_first_and_awaited() -> None:
    order: list[str] = []
    tasks = TaskSet("t")

    async def sleeper(name: str) -> None:
        try:
            await asyncio.sleep(10)
        finally:
            order.append(name)

    tasks.spawn(sleeper("first"))
    tasks.spawn(sleeper("second"))
    await asyncio.sleep(0)
    await tasks.aclose()
    assert order == ["second", "first"]
    assert len(tasks) == 0
    with pytest.raises(RuntimeError):
        tasks.spawn(sleeper("late"))


async def test_failures_are_logged_not_lost(caplog: pytest.LogCaptureFixture) -> None:
    tasks = TaskSet("t")

    async def boom() -> None:
        raise ValueError("kaboom")

    with caplog.at_level(logging.ERROR):
        task = tasks.spawn(boom(), name="boom")
        await asyncio.wait([task])
        await asyncio.sleep(0)
    assert tasks.failures == 1
    assert "kaboom" in caplog.text
    await tasks.aclose()
