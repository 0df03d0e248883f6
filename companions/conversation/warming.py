"""Warming the likely next speaker's prompt while the conversation is idle.

On a local model server most of a cold request is its prompt: measured on llama-cpp-python (a 0.5B model on two
cores) the persona and the memory (~400 tokens) took ~2.2 s to evaluate, while the part of a reply that is new
(the user's message and the turn's instructions, ~70 tokens) took ~0.4 s. Such a server keeps the last prompt it
evaluated (its prompt cache) and evaluates only what follows the longest common prefix. After a conversation ends,
and once the app has started, the server is idle while the user reads and types; then the companion that would
answer a message to everyone (:func:`~companions.conversation.direct.likely_speaker`) has its prompt prefix
evaluated once, by a one-token request at the lowest priority (its :attr:`Description.warm`). The user's next
message then costs only what is new, for the events request and the reply alike.

A message, a forced turn or Stop cancels a warm-up still waiting for its delay; one already sent is left to finish:
the server evaluates a prompt to its end whatever (llama.cpp stops a request only between generated tokens), so
closing it threw that work away (measured on Madoi's runner: a warm-up of 603 prompt tokens closed as the user's
message came, and the reply evaluated the same prompt again), while a finished one is kept for its companion's
next request (the runner keeps each companion's prompt; a server with one prompt cache keeps the latest). A
participant offers
``warm`` only where it pays: a local server (a hosted API bills the tokens and caches prompts by itself); its
``warm()`` says whether the prompt was evaluated. The companions' models are found after the start (a model server
probed, a model file loaded): until then there is nothing to warm, and the manager warms again once they are
(``ConversationManager.models_changed``; measured on Madoi's own runner: the one warm-up after the start ran while
the model was still loading, and the first turn evaluated its whole prompt).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from companions.common.tasks import TaskSet

log = logging.getLogger(__name__)

WarmUp = Callable[[], Awaitable[bool]]  # whether the prompt was evaluated


class Warmer:
    """Runs at most one warm-up, ``delay_s`` after the conversation went idle (``None``: never)."""

    def __init__(self, owner: TaskSet, delay_s: float | None) -> None:
        self._owner = owner
        self.delay_s = delay_s
        self._task: asyncio.Task[None] | None = None
        self._sent: asyncio.Task[None] | None = None  # the warm-up whose request is on its way (left to finish)
        self.warmed = 0  # warm-ups that evaluated a prompt to its end (for tests and the benchmark)

    def schedule(self, pick: Callable[[], WarmUp | None]) -> None:
        """Starts a warm-up once the delay has passed; ``pick`` then says whose (``None``: nobody's)."""
        self.cancel()
        if self.delay_s is not None:
            self._task = self._owner.spawn(self._run(pick, self.delay_s), name="warm-up")

    def cancel(self) -> None:
        """Cancels a warm-up still waiting for its delay; one whose request was sent finishes (module docstring)."""
        if self._task is not None and not self._task.done() and self._task is not self._sent:
            self._task.cancel()
        self._task = None

    async def _run(self, pick: Callable[[], WarmUp | None], delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        warm = pick()
        if warm is None:
            return
        self._sent = asyncio.current_task()
        try:
            evaluated = await warm()
        except Exception as exc:  # a warm-up is only a head start: its failure costs the next turn nothing
            log.info("warming the next speaker's prompt failed: %s: %s", type(exc).__name__, exc)
            return
        if evaluated:
            self.warmed += 1
