"""The order in which one endpoint's gate lets requests through (companions/llm/gate.py), in one place.

A local server runs one request at a time and cannot stop one it began evaluating, so what the user waits for goes
first and background work goes only where it can never hold a turn up: the chosen speaker's line, then votes, then
(below zero, the idle server's work) a card's events filled after a line, the warm-up of the likely next speaker's
prompt, notes about the user, and last learning what a new server can do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

from companions.llm.types import ChatModel, ChatRequest, StreamEvent

TURN: Final = 1  # the chosen speaker composing its line (the worker's requests)
VOTE: Final = 0  # votes and events filled before a line (ChatRequest's default)
EVENTS_AFTER_LINE: Final = -50  # a card's events for a companion's next line, filled after its line
WARM_UP: Final = -100  # the likely next speaker's prompt evaluated while the conversation is idle
NOTES: Final = -150  # notes about the user written after a conversation ended
LEARNING: Final = -200  # what a new server can do, learned before the user's first turn


class AtPriority:
    """``model`` with every request sent at ``priority`` on its endpoint's gate."""

    def __init__(self, model: ChatModel, priority: int) -> None:
        self._model = model
        self._priority = priority

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def supports_images(self) -> bool:
        return self._model.supports_images

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        return self._model.stream(request.model_copy(update={"priority": self._priority}))
