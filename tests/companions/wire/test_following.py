"""A read model following the bus: it takes in the ``events`` topic from attach to close, one bus at a time."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from companions.wire.bus import BusItem, InProcessBus, LocalEvent
from companions.wire.following import EventsFollower
from companions.wire.protocol import Message


@dataclass(frozen=True)
class Said(LocalEvent):
    text: str


class Heard(EventsFollower, name="heard"):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def apply(self, item: BusItem) -> None:
        if isinstance(item, Said):
            self.texts.append(item.text)


class HeardAtOnce(Heard, name="heard-at-once", direct=True):
    pass


@pytest.fixture
async def bus() -> InProcessBus:
    return InProcessBus()


async def test_a_follower_takes_in_the_events_from_attach_until_close(bus: InProcessBus) -> None:
    heard = Heard()
    bus.publish(Said("before"))
    heard.attach(bus)
    bus.publish(Said("one"))
    bus.publish(Message.create(from_="user", message="a message is not an event"))
    bus.publish(Said("two"))
    assert await bus.drain()
    heard.close()
    heard.close()  # idempotent
    bus.publish(Said("after"))
    assert await bus.drain()
    assert heard.texts == ["one", "two"]
    assert bus.subscriber_count == 0


async def test_attaching_again_follows_the_new_bus_only_and_once(bus: InProcessBus) -> None:
    other = InProcessBus()
    heard = Heard()
    heard.attach(bus)
    heard.attach(bus)
    bus.publish(Said("once"))
    assert await bus.drain()
    heard.attach(other)
    bus.publish(Said("left behind"))
    other.publish(Said("followed"))
    assert await bus.drain()
    assert await other.drain()
    assert heard.texts == ["once", "followed"]
    heard.close()


async def test_a_direct_follower_has_taken_an_event_in_when_publish_returns(bus: InProcessBus) -> None:
    queued, direct = Heard(), HeardAtOnce()
    queued.attach(bus)
    direct.attach(bus)
    bus.publish(Said("now"))
    assert direct.texts == ["now"]
    assert queued.texts == []  # its queue is read by its own task, later
    assert await bus.drain()
    assert queued.texts == ["now"]
    queued.close()
    direct.close()
