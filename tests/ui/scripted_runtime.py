"""A started runtime whose three sample companions (akari, hina, souta) talk through scripted chat models.

The models come in through the runtime's ChatModel seam (``Runtime(make_model=...)``); everything else is the real
assembly: bus, storage, conversation control, speech rendered to WAV files.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from PySide6.QtCore import SignalInstance

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.cards.card import CompanionCard
from companions.llm.scripted import ScriptedCast, ScriptedModel, Step, reply_json

COMPANIONS = ("akari", "hina", "souta")

# What each sample card's events ask the model to fill before it speaks (answers that just lead to "reply").
EVENT_PARAMS: dict[str, dict[str, Any]] = {
    "akari": {"already_replied": True, "need_response": True, "wants_to_see": False},
    "hina": {"need_response": True, "user_mood": "happy"},
    "souta": {"need_response": True, "needs_facts": False},
}


def scripted_cast() -> ScriptedCast:
    """One scripted model per sample companion; their card events are always answered with a plain "reply"."""
    cast = ScriptedCast(*COMPANIONS)
    for name, model in cast.items():
        model.lane("event_params").always(reply_json(EVENT_PARAMS[name]))
    return cast


def votes(model: ScriptedModel, *choices: tuple[str, int] | tuple[str, int, str] | dict[str, Any]) -> None:
    """Queues ``model``'s next votes: ``("speak", 8)``, ``("listen", 2, "a reason")`` or the vote's JSON."""
    for choice in choices:
        if isinstance(choice, dict):
            model.lane("vote").add(reply_json(choice))
            continue
        state, importance, *reason = choice
        model.lane("vote").add(reply_json({"state": state, "importance": importance,
                                           "reason": reason[0] if reason else ""}))


def lines(model: ScriptedModel, *steps: Step) -> None:
    """Queues what ``model`` says when it holds the floor (``say(...)``, ``stall()``)."""
    model.lane("chat").add(*steps)


@contextlib.asynccontextmanager
async def scripted_runtime(cast: ScriptedCast) -> AsyncIterator[Runtime]:
    """A started runtime on the ``madoi_home`` fixture's home whose companions use ``cast``'s models."""

    def make_model(card: CompanionCard) -> ScriptedModel:
        return cast[card.id]

    runtime = Runtime(load_settings(), make_model=make_model)
    await runtime.start()
    try:
        yield runtime
    finally:
        await runtime.stop()


async def until(signal: SignalInstance, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Returns once ``condition()`` holds, checking it now and after every emission of ``signal``."""
    if condition():
        return
    loop = asyncio.get_running_loop()
    met: asyncio.Future[None] = loop.create_future()

    def check(*_: object) -> None:
        if not met.done() and condition():
            met.set_result(None)

    signal.connect(check)
    try:
        await asyncio.wait_for(met, timeout)
    except TimeoutError:
        raise TimeoutError(f"condition not met within {timeout} s") from None
    finally:
        signal.disconnect(check)
