"""A ChatModel that stands in for one that could not be set up, so a companion still appears and says why."""

from __future__ import annotations

from collections.abc import AsyncIterator

from companions.llm.types import ChatRequest, LLMError, StreamEvent


class UnavailableModel:
    """Every request fails at once with the reason the real model could not be built (never a hang)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    @property
    def name(self) -> str:
        return "unavailable"

    @property
    def supports_images(self) -> bool:
        return False

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        raise LLMError(self.reason)
        yield  # pragma: no cover - makes this an async generator
