"""Conversation simulations on the Participant port: a participant double whose votes and lines come from
functions, and the simulation the ``sim_factory`` fixture (tests/companions/conftest.py) builds around the real
manager and bus."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from companions.conversation import (
    ComposedLine,
    ConversationManager,
    ConversationReadModel,
    ConversationView,
    Participant,
    TurnContext,
    Vote,
)
from companions.conversation.commands import ConversationControl
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Closing, Message, State

VoteFn = Callable[[TurnContext], Awaitable[Vote] | Vote]


SayFn = Callable[[TurnContext, Closing], str | None]


@dataclass(eq=False)
class Double(Participant):
    """A Participant double: votes and lines come from functions; speech can be held open by a test."""

    id: str
    vote_fn: VoteFn
    say_fn: SayFn = lambda turn, closing: "hmm"
    log: list[str] = field(default_factory=list)  # shared event log: "vote:x", "compose:x", "speak:x" ...
    hold_speech: bool = False
    turns: list[TurnContext] = field(default_factory=list)
    spoken: list[Message] = field(default_factory=list)
    interrupts: int = 0
    _release: asyncio.Event = field(default_factory=asyncio.Event)
    speaking: asyncio.Event = field(default_factory=asyncio.Event)

    async def vote(self, turn: TurnContext) -> Vote:
        self.turns.append(turn)
        result = self.vote_fn(turn)
        if not isinstance(result, Vote):
            result = await result
        return result

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        self.log.append(f"compose:{self.id}")
        text = self.say_fn(turn, closing)
        return ComposedLine(text=text) if text is not None else None

    async def speak(self, message: Message) -> None:
        self.log.append(f"speak:{self.id}")
        self.speaking.set()
        try:
            if self.hold_speech:
                await self._release.wait()
                self._release.clear()
            self.spoken.append(message)
        finally:
            self.speaking.clear()
            self.log.append(f"spoken:{self.id}")

    def release(self) -> None:
        self._release.set()

    async def interrupt(self) -> None:
        self.interrupts += 1
        self.log.append(f"interrupt:{self.id}")


def wants(importance: int, *, closing: Closing = "none", reason: str = "") -> VoteFn:
    return lambda turn: Vote(state="speak", importance=importance, closing=closing, reason=reason)


def listens(turn: TurnContext) -> Vote:
    return Vote(state="listen", importance=0)


@dataclass
class Sim:
    bus: InProcessBus
    manager: ConversationManager
    model: ConversationReadModel
    messages: list[Message]
    states: list[State]
    control: ConversationControl  # the user's commands

    def send(self, text: str, to: list[str] | None = None) -> Message:
        message = Message.create(from_="user", message=text, to=to or [])
        self.bus.publish(message)
        return message

    async def ended(self, timeout: float = 5.0) -> ConversationView:
        return await self.model.wait_for(lambda v: v.status == "ended", timeout)

    def said(self) -> list[tuple[str, str]]:
        return [(m.params.from_, m.params.message) for m in self.messages if m.params.from_ != "user"]
