"""Early speech: the chosen speaker's first sentence is said while the rest of its line is still being composed,
never over the previous speech, and what was said early is not said again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from companions.conversation import ComposedLine, TurnContext
from companions.conversation.early_speech import remainder
from companions.wire.protocol import Closing
from tests.companions.conversation_sim import Double, Sim, listens, wants


@dataclass(eq=False)
class Streaming(Double):
    """Offers its first sentence, then waits (still composing) until the test lets it finish its line."""

    speaks_early = True

    first: str = "First sentence. "
    rest: str = "And the second one."
    parts: list[str] = field(default_factory=list)
    finish_line: asyncio.Event = field(default_factory=asyncio.Event)
    part_said: asyncio.Event = field(default_factory=asyncio.Event)

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        self.log.append(f"compose:{self.id}")
        assert turn.early is not None, "the manager offers early speech to a participant that can speak_part"
        turn.early(self.first)
        await self.finish_line.wait()
        return ComposedLine(self.first + self.rest)

    async def speak_part(self, text: str) -> None:
        self.log.append(f"part:{self.id}:{text.strip()}")
        self.parts.append(text.strip())
        self.part_said.set()


async def test_the_first_sentence_is_said_while_the_rest_is_composed(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    log: list[str] = []
    aoi = Streaming("aoi", wants(5), log=log)
    sim = await sim_factory(aoi, turn_cap=1)
    sim.send("Tell me something", to=["aoi"])
    await asyncio.wait_for(aoi.part_said.wait(), 2.0)
    assert aoi.parts == ["First sentence."]
    assert sim.said() == []  # still composing: the message is published once the line is complete
    aoi.finish_line.set()
    await sim.ended()
    assert sim.said() == [("aoi", "First sentence. And the second one.")]
    assert aoi.parts == ["First sentence.", "And the second one."]  # nothing said twice
    assert not aoi.spoken  # the whole-line speak was never used


async def test_an_early_sentence_waits_for_the_previous_speech(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []
    ben = Double("ben", wants(9), lambda t, c: "A long story.", log, hold_speech=True)
    aoi = Streaming("aoi", wants(5), log=log)
    aoi.finish_line.set()
    sim = await sim_factory(ben, aoi, turn_cap=2)
    sim.send("Hello")
    await asyncio.wait_for(ben.speaking.wait(), 2.0)
    await sim.model.wait_for(lambda v: v.turn is not None and v.turn.speaker == "aoi" and v.turn.phase == "waiting")
    assert aoi.parts == []  # composed, but ben still speaks
    ben.vote_fn, ben.hold_speech = listens, False
    ben.release()
    await sim.ended()
    assert log.index("spoken:ben") < log.index("part:aoi:First sentence.")
    assert sim.said()[-1] == ("aoi", "First sentence. And the second one.")


async def test_interrupt_stops_an_early_speech(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    aoi = Streaming("aoi", wants(5))
    sim = await sim_factory(aoi)
    sim.send("Tell me something", to=["aoi"])
    await asyncio.wait_for(aoi.part_said.wait(), 2.0)
    sim.control.interrupt()
    view = await sim.ended()
    assert view.ended_reason == "interrupted"
    assert sim.said() == []  # the line was never finished: it is not published
    assert aoi.parts == ["First sentence."]


def test_the_remainder_ignores_white_space() -> None:
    assert remainder("Hello there! How are you?", "Hello there! ") == "How are you?"
    assert remainder("こんにちは！あかりです。", "こんにちは！") == "あかりです。"
    assert remainder("Something else.", "Hello.") is None
