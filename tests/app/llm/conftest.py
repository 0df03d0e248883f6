"""Fixtures of the language model tests: model runners that are stopped at the end, whatever happened."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.llm.runner import ModelRunner


@pytest.fixture
async def runners() -> AsyncIterator[list[ModelRunner]]:
    """Runners made by a test; each is stopped at the end (its child ended)."""
    made: list[ModelRunner] = []
    yield made
    for runner in made:
        await runner.stop()
