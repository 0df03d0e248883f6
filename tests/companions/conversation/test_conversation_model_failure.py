"""A conversation that ends because the language model did not answer says so ("model-failed", the backend's reason
as the detail), apart from one where nothing could be said for another reason ("failed"); the model's trouble goes on
the bus once, however many candidates it failed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator

import pytest

from companions.conversation import ComposedLine, TurnContext, Vote
from companions.conversation.participant import Description, Pace
from companions.llm.health import ModelTrouble, model_health
from companions.llm.types import LLMError
from companions.wire.bus import BusItem
from companions.wire.protocol import Closing
from tests.companions.conversation_sim import Double, Sim, wants

ENDPOINT = "http://127.0.0.1:8080/v1"


@pytest.fixture(autouse=True)
def _no_troubles_left() -> Iterator[None]:
    model_health.forget()
    yield
    model_health.forget()


def model_gone(turn: TurnContext, closing: Closing) -> str | None:
    error = LLMError(f"cannot reach {ENDPOINT} (ConnectError: connection refused)", retryable=True,
                     kind="unreachable", cause="connection-refused", endpoint=ENDPOINT)
    model_health.failed(error)  # as the OpenAI backend does
    raise error


def broken(turn: TurnContext, closing: Closing) -> str | None:
    raise RuntimeError("a bug, not the model")


async def test_a_model_that_cannot_be_reached_ends_the_conversation_as_model_failed(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []
    sim = await sim_factory(*(Double(who, wants(5), model_gone, log=log) for who in ("akari", "hina", "souta")),
                            direct_turns=False)
    events: list[BusItem] = []
    sim.bus.subscribe("events", events.append, name="events", direct=True)
    sim.send("hello")
    view = await sim.ended()
    assert log.count("compose:akari") + log.count("compose:hina") + log.count("compose:souta") == 3
    assert view.ended_reason == "model-failed"
    assert "cannot reach http://127.0.0.1:8080/v1" in view.ended_detail
    troubles = [e for e in events if isinstance(e, ModelTrouble)]
    assert [(t.endpoint, t.kind, t.cause) for t in troubles] == [(ENDPOINT, "unreachable", "connection-refused")]


async def test_a_model_known_down_before_the_turn_is_still_why_it_failed(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    model_health.failed(LLMError("gone", kind="crashed", endpoint=ENDPOINT))  # said before: not again
    sim = await sim_factory(Double("akari", wants(5), broken), direct_turns=False)
    sim.send("hello")
    assert (await sim.ended()).ended_reason == "model-failed"


async def test_nothing_said_for_another_reason_is_still_failed(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    sim = await sim_factory(Double("akari", wants(5), broken), direct_turns=False)
    sim.send("hello")
    view = await sim.ended()
    assert (view.ended_reason, view.ended_detail) == ("failed", "no candidate could say anything")


def vote_fails(turn: TurnContext) -> Vote:
    raise LLMError(f"cannot reach {ENDPOINT}", kind="unreachable", endpoint=ENDPOINT)


async def test_votes_that_all_failed_on_a_model_known_down_are_the_model_failing_not_nobody_wanting_to_speak(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    """One joint request decides every vote on a one-request-at-a-time server: when the server is gone, every vote
    fails together; a model known down since before the turn (its trouble said then, once) is still the reason."""
    model_health.failed(LLMError("gone", kind="unreachable", endpoint=ENDPOINT))
    sim = await sim_factory(Double("akari", vote_fails), Double("hina", vote_fails), direct_turns=False)
    sim.send("hello")
    assert (await sim.ended()).ended_reason == "model-failed"



class Stuck(Double):
    """A companion whose model never finishes its line (a server too busy to answer within the compose timeout)."""

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        self.log.append(f"compose:{self.id}")
        await asyncio.sleep(3600)
        return None


async def test_a_line_that_takes_longer_than_the_compose_timeout_is_the_model_not_answering_in_time(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    """The user's message must not go unanswered in silence: the model's trouble goes on the bus (the chat's notice
    says the model did not answer in time) and the turn ends as the model failing."""
    akari = Stuck("akari", wants(5))
    akari.description = Description(names=("Akari",), pace_of=lambda: Pace(ENDPOINT, slots=1))
    sim = await sim_factory(akari, direct_turns=False)
    events: list[BusItem] = []
    sim.bus.subscribe("events", events.append, name="events", direct=True)
    sim.send("hello")
    view = await sim.ended()
    assert (view.ended_reason, akari.log) == ("model-failed", ["compose:akari"])
    assert "took longer than 1 s" in view.ended_detail
    assert [(t.endpoint, t.kind) for t in events if isinstance(t, ModelTrouble)] == [(ENDPOINT, "timed-out")]


async def test_a_participant_with_no_model_that_takes_too_long_just_fails(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    sim = await sim_factory(Stuck("akari", wants(5)), direct_turns=False)
    sim.send("hello")
    view = await sim.ended()
    assert (view.ended_reason, view.ended_detail) == ("failed", "no candidate could say anything")
    assert model_health.troubles == ()
