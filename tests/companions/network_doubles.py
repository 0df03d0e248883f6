"""Doubles for the network's tests: the NetworkPort double that records what the link sends (the test plays the
network through its sink), a remote peer and its companion, a local participant that votes after a delay, and a
node (bus, conversation manager and network link) on whichever network port a test gives it."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from companions.conversation import (
    ComposedLine,
    ConversationChanged,
    ConversationConfig,
    ConversationManager,
    Participant,
    TurnContext,
    Vote,
)
from companions.network.link import NetworkLink
from companions.network.port import NetworkError, NetworkPort, NetworkSink, NetworkStatus
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Closing, CompanionMetadata, Message
from tests.waiting import wait_until

PEER = "12D3KooWRemotePeer"
SOUTA = CompanionMetadata(id="souta", name="Souta", personality="calm", story="a student", sample="Hi.")


@dataclass
class RecordingPort:
    """The NetworkPort double: records what the link sends; the test plays the network through the sink."""

    fail: str | None = None
    sent: list[tuple[str, Any]] = field(default_factory=list)
    sink: NetworkSink | None = None
    sent_event: asyncio.Event = field(default_factory=asyncio.Event)
    served: list[tuple[CompanionMetadata, ...]] = field(default_factory=list)  # at start, then at each announce

    async def start(self, sink: NetworkSink, local: tuple[CompanionMetadata, ...]) -> NetworkStatus:
        if self.fail is not None:
            raise NetworkError(self.fail)
        self.sink = sink
        self.served.append(local)
        return self.status()

    def publish(self, topic: str, payload: bytes) -> None:
        self.sent.append((topic, json.loads(payload)))
        self.sent_event.set()

    def announce(self, local: tuple[CompanionMetadata, ...]) -> None:
        self.served.append(local)

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


P = TypeVar("P", bound=NetworkPort)


@dataclass
class Node(Generic[P]):
    """A node in a test: its own bus, conversation manager and network link over ``network``, and everything its bus
    carried (``changed`` is set on each item). Waits wake on what the bus carried, and every ``every`` seconds
    besides (a roster that changes on another thread's callbacks carries nothing on the bus)."""

    bus: InProcessBus
    manager: ConversationManager
    link: NetworkLink
    network: P
    seen: list[Any]
    changed: asyncio.Event
    patience: float = 5.0  # how long a wait takes at most unless the test says otherwise
    every: float = math.inf

    def lines(self) -> list[tuple[str, str]]:
        return [(m.params.from_, m.params.message) for m in self.seen if isinstance(m, Message)]

    def ids(self) -> list[str]:
        """The messages' ids, in order: the same on every node (a user elsewhere has another name here)."""
        return [m.params.id for m in self.seen if isinstance(m, Message)]

    def speakers(self) -> list[str]:
        """Who each turn of this node chose, in order."""
        chosen: dict[int, str] = {}
        for view in (e.view for e in self.seen if isinstance(e, ConversationChanged)):
            if view.turn is not None and view.turn.speaker is not None:
                chosen.setdefault(view.turn.number, view.turn.speaker)
        return list(chosen.values())

    def first_speaker(self) -> str | None:
        turns = [e.view.turn for e in self.seen if isinstance(e, ConversationChanged) and e.view.turn is not None
                 and e.view.turn.number == 1 and e.view.turn.speaker is not None]
        return turns[0].speaker if turns else None

    async def wait_for(self, predicate: Callable[[], bool], timeout: float | None = None) -> None:
        await wait_until(predicate, timeout=timeout or self.patience, changed=self.changed, every=self.every)

    async def stop(self) -> None:
        await self.link.stop()
        await self.manager.stop()


async def start_node(network: P, companions: Sequence[Companion], *, deadline_s: float, turn_cap: int = 1,
                     patience: float = 5.0, every: float = math.inf) -> Node[P]:
    """A node with ``companions`` on ``network``, started."""
    bus = InProcessBus()
    seen: list[Any] = []
    changed = asyncio.Event()

    def record(item: Any) -> None:
        seen.append(item)
        changed.set()

    bus.subscribe(("messages", "states", "events"), record, direct=True)
    manager = ConversationManager(bus, user_id="user", participants=companions,
                                  config=ConversationConfig(vote_deadline_s=deadline_s, turn_cap=turn_cap))
    link = NetworkLink(bus, network, local=[CompanionMetadata(id=c.id, name=c.id) for c in companions],
                       user_id="user", roster=manager)
    await manager.start()
    await link.start()
    return Node(bus, manager, link, network, seen, changed, patience, every)
