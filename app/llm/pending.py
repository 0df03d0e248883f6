"""A companion's model while the default one is still being found: its requests wait for it, bounded.

Madoi shows its window (or prints its ready line) before it knows which model the companions talk to: probing
Ollama, LM Studio and llama.cpp, or loading a model file in the embedded runner, happens after. Meanwhile each
companion that needs the default model thinks with a :class:`PendingModel`. A request waits until the model is
known (then goes to it unchanged) or until ``wait_s`` has passed (then fails with a plain reason: no model yet).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

from companions.llm.types import ChatModel, ChatRequest, LLMError, StreamEvent

DEFAULT_WAIT_S = 180.0
"""How long a request waits for the model: a model file of a few GB loads within this on a slow disk."""


class PendingModel:
    """Stands in for the model ``resolved()`` will give; ``waiting()`` says, when the wait runs out, what is still
    under way (in plain words, for the user)."""

    def __init__(self, resolved: Callable[[], Awaitable[ChatModel]], waiting: Callable[[], str], *,
                 wait_s: float = DEFAULT_WAIT_S) -> None:
        self._resolved = resolved
        self._waiting = waiting
        self._wait_s = wait_s

    @property
    def name(self) -> str:
        return "pending"

    @property
    def supports_images(self) -> bool:
        return False  # not known yet: a request with a picture would be refused by a text-only model

    async def model(self) -> ChatModel:
        """The model once it is known; LLMError (with the reason) when it is not known within ``wait_s``."""
        try:
            async with asyncio.timeout(self._wait_s):
                return await self._resolved()
        except TimeoutError:
            raise LLMError(f"no language model is available yet: {self._waiting()}") from None

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        model = await self.model()
        async for event in model.stream(request):
            yield event
