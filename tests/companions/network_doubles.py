"""Doubles for the network's tests: the NetworkPort double that records what the link sends (the test plays the
network through its sink), a remote peer and its companion, and a local participant that votes after a delay."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from companions.conversation import (
    ComposedLine,
    Participant,
    TurnContext,
    Vote,
)
from companions.network.port import NetworkError, NetworkSink, NetworkStatus
from companions.protocol import Closing, CompanionMetadata

PEER = "12D3KooWRemotePeer"
SOUTA = CompanionMetadata(id="souta", name="Souta", personality="calm", story="a student", sample="Hi.")


@dataclass
class RecordingPort:
    """The NetworkPort double: records what the link sends; the test plays the network through the sink."""

    fail: str | None = None
    sent: list[tuple[str, Any]] = field(default_factory=list)
    sink: NetworkSink | None = None
    sent_event: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self, sink: NetworkSink, local: tuple[CompanionMetadata, ...]) -> NetworkStatus:
        if self.fail is not None:
            raise NetworkError(self.fail)
        self.sink = sink
        return self.status()

    def publish(self, topic: str, payload: bytes) -> None:
        self.sent.append((topic, json.loads(payload)))
        self.sent_event.set()

    def status(self) -> NetworkStatus:
        return NetworkStatus(running=self.sink is not None, peer_id="12D3KooWLocal", addresses=("/ip4/127.0.0.1",))

    async def stop(self) -> None:
        self.sink = None

    async def wait_sent(self, topic: str, count: int = 1) -> list[Any]:
        async with asyncio.timeout(5):
            while len([d for t, d in self.sent if t == topic]) < count:
                self.sent_event.clear()
                await self.sent_event.wait()
        return [d for t, d in self.sent if t == topic]


@dataclass(eq=False)
class Companion(Participant):
    """A local participant double: votes ``importance`` after ``vote_s``, and says its line."""

    id: str
    importance: int
    vote_s: float = 0.0
    composed: list[str] = field(default_factory=list)  # the turns it composed for
    voting: asyncio.Event = field(default_factory=asyncio.Event)  # set once it was asked to vote

    async def vote(self, turn: TurnContext) -> Vote:
        self.voting.set()
        await asyncio.sleep(self.vote_s)  # the model's time to vote
        return Vote(state="speak", importance=self.importance)

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        self.composed.append(turn.turn_id)
        return ComposedLine(text=f"{self.id} answers")
