"""The in-process bus: ordered delivery, isolation of failing and slow subscribers, bounded queues, threads."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest

from companions.bus import InProcessBus, LocalEvent
from companions.protocol import Action, Message, State


def msg(text: str) -> Message:
    return Message.create(from_="user", message=text)


async def collect(bus: InProcessBus, topics: tuple[str, ...] | str, **kw: object) -> list[object]:
    got: list[object] = []
    bus.subscribe(topics, got.append, **kw)  # type: ignore[arg-type]
    return got


async def test_delivers_in_order_to_subscribers_of_the_topic_only() -> None:
    bus = InProcessBus()
    messages = await collect(bus, "messages")
    states = await collect(bus, "states")
    for i in range(50):
        bus.publish(msg(str(i)))
    bus.publish(State.create(from_="c1", message_id="m", state="listen", importance=1))
    assert await bus.drain()
    assert [m.params.message for m in messages] == [str(i) for i in range(50)]  # type: ignore[attr-defined]
    assert len(states) == 1
    await bus.aclose()


async def test_a_failing_subscriber_is_logged_and_isolated(caplog: pytest.LogCaptureFixture) -> None:
    bus = InProcessBus()
    good = await collect(bus, "messages")

    def bad(item: object) -> None:
        raise ValueError("subscriber bug")

    sub = bus.subscribe("messages", bad, name="bad")
    with caplog.at_level(logging.ERROR):
        bus.publish(msg("a"))
        bus.publish(msg("b"))
        assert await bus.drain()
    assert len(good) == 2
    assert sub.stats.failed == 2  # still subscribed after the first failure
    assert "subscriber bug" in caplog.text
    await bus.aclose()


async def test_a_slow_subscriber_does_not_delay_others_or_the_publisher() -> None:
    bus = InProcessBus()
    release = asyncio.Event()

    async def slow(item: object) -> None:
        await release.wait()

    bus.subscribe("messages", slow, name="slow")
    fast = await collect(bus, "messages")
    started = time.perf_counter()
    for i in range(100):
        bus.publish(msg(str(i)))
    assert time.perf_counter() - started < 0.05
    for _ in range(20):
        if len(fast) == 100:
            break
        await asyncio.sleep(0)
    assert len(fast) == 100
    release.set()
    assert await bus.drain()
    await bus.aclose()


@pytest.mark.parametrize(("policy", "kept"), [("drop_oldest", ["7", "8", "9"]), ("drop_newest", ["1", "2", "3"])])
async def test_overflow_is_bounded_counted_and_follows_the_policy(policy: str, kept: list[str]) -> None:
    bus = InProcessBus()
    gate = asyncio.Event()
    got: list[str] = []

    async def handler(item: Message) -> None:
        await gate.wait()
        got.append(item.params.message)

    sub = bus.subscribe("messages", handler, maxsize=3, overflow=policy)  # type: ignore[arg-type]
    bus.publish(msg("0"))
    await asyncio.sleep(0)  # the subscriber takes "0" and waits at the gate
    for i in range(1, 10):
        bus.publish(msg(str(i)))
    gate.set()
    assert await bus.drain()
    assert got == ["0", *kept]
    assert sub.stats.dropped == 6
    await bus.aclose()


async def test_unsubscribe_stops_delivery() -> None:
    bus = InProcessBus()
    got: list[object] = []
    sub = bus.subscribe("messages", got.append)
    bus.publish(msg("a"))
    await bus.drain()
    sub.close()
    sub.close()  # idempotent
    bus.publish(msg("b"))
    await bus.drain()
    assert len(got) == 1
    assert bus.subscriber_count == 0
    await bus.aclose()


async def test_publish_from_other_threads_arrives_on_the_loop_thread() -> None:
    bus = InProcessBus()
    loop_thread = threading.get_ident()
    seen_threads: set[int] = set()
    got: list[object] = []

    def handler(item: object) -> None:
        seen_threads.add(threading.get_ident())
        got.append(item)

    bus.subscribe("actions", handler)

    def worker(n: int) -> None:
        for i in range(100):
            bus.publish(Action.create(from_=f"t{n}", name="gesture", params={"i": i}))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    await asyncio.gather(*(asyncio.to_thread(t.run) for t in threads))
    for _ in range(200):
        if len(got) == 400:
            break
        await asyncio.sleep(0.005)
    assert len(got) == 400
    assert seen_threads == {loop_thread}
    await bus.aclose()


async def test_local_events_travel_on_their_own_topic() -> None:
    class Ping(LocalEvent):
        pass

    bus = InProcessBus()
    events = await collect(bus, "events")
    messages = await collect(bus, "messages")
    bus.publish(Ping())
    await bus.drain()
    assert len(events) == 1
    assert messages == []
    await bus.aclose()


async def test_close_cancels_subscriber_tasks_and_rejects_new_subscriptions() -> None:
    bus = InProcessBus()
    block = asyncio.Event()

    async def stuck(item: object) -> None:
        await block.wait()

    bus.subscribe("messages", stuck)
    bus.publish(msg("x"))
    await asyncio.sleep(0)
    await asyncio.wait_for(bus.aclose(), 1)
    with pytest.raises(RuntimeError):
        bus.subscribe("messages", stuck)
    bus.publish(msg("ignored after close"))  # no error


async def test_subscribe_rejects_unknown_topics() -> None:
    bus = InProcessBus()
    with pytest.raises(ValueError, match="unknown topics"):
        bus.subscribe("gossip", print)  # type: ignore[arg-type]
    await bus.aclose()
