"""Fixtures shared by the core's tests (no Qt: the core-only run, tests.block_gui, loads this file)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from companions.conversation import (
    ConversationConfig,
    ConversationManager,
    ConversationReadModel,
)
from companions.conversation.commands import ConversationControl
from companions.llm.capabilities import forget_endpoints
from companions.testing.openai_server import OpenAITestServer
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message, State
from tests.companions.conversation_sim import Double, Sim


@pytest.fixture
async def sim_factory() -> AsyncIterator[Callable[..., Awaitable[Sim]]]:
    """Builds conversation simulations (tests/companions/conversation_sim.py) and stops them after the test."""
    made: list[Sim] = []

    async def make(*participants: Double, **config: float) -> Sim:
        bus = InProcessBus()
        messages: list[Message] = []
        states: list[State] = []
        bus.subscribe("messages", messages.append)
        bus.subscribe("states", states.append)
        model = ConversationReadModel()
        model.attach(bus)
        # Half a second: enough for votes that answer at once on a loaded 2-core machine (at 50 ms a descheduled
        # process saw immediate votes as missing); tests of the deadline itself wait it out.
        cfg = ConversationConfig(**{"vote_deadline_s": 0.5, "compose_timeout_s": 1.0, **config})  # type: ignore[arg-type]
        manager = ConversationManager(bus, user_id="user", config=cfg, participants=participants)
        control = ConversationControl(manager)
        await manager.start()
        await control.start()
        sim = Sim(bus, manager, model, messages, states, control)
        made.append(sim)
        return sim

    yield make
    for sim in made:
        await sim.control.stop()
        await sim.manager.stop()
        await sim.bus.aclose()


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    """The OpenAI-compatible test server on loopback (a module needing another one defines its own ``server``)."""
    async with OpenAITestServer() as s:
        yield s


@pytest.fixture
def fresh_endpoints() -> None:
    """What an earlier test's server taught about its endpoint must not leak through a reused port
    (``pytestmark = pytest.mark.usefixtures("fresh_endpoints")``)."""
    forget_endpoints()


@pytest.fixture(autouse=True)
def _no_model_troubles_left() -> Iterator[None]:
    """A model an earlier test left down (the process's model health record) must not end this test's turns."""
    from companions.llm.health import model_health

    model_health.forget()
    yield
    model_health.forget()
