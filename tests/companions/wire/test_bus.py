"""The in-process bus: ordered delivery, isolation of failing and slow subscribers, bounded queues, threads."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest

from companions.wire.bus import InProcessBus, LocalEvent
from companions.wire.protocol import Action, Message, State
from tests.waiting import wait_until


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
    # A publisher held up by the slow subscriber would wait until release (never, here); 100 publishes take ~1 ms,
    # and up to 0.1 s on a loaded 2-core machine (a 50 ms bound failed CI there).
    assert time.perf_counter() - started < 1.0
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
    await wait_until(lambda: len(got) == 400, timeout=1)
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


# -- direct delivery ----------------------------------------------------------------------------------------------


async def test_a_direct_subscriber_runs_inside_publish_in_order_without_a_task() -> None:
    bus = InProcessBus()
    got: list[str] = []
    tasks_before = len(asyncio.all_tasks())
    sub = bus.subscribe("messages", lambda m: got.append(m.params.message), name="direct", direct=True)
    assert len(asyncio.all_tasks()) == tasks_before
    for i in range(5):
        bus.publish(msg(str(i)))
        assert got == [str(j) for j in range(i + 1)]  # before publish returned
    assert sub.stats.delivered == 5
    assert await bus.drain()  # nothing queued for a direct subscriber
    sub.close()
    sub.close()  # idempotent
    bus.publish(msg("after close"))
    assert len(got) == 5
    assert bus.subscriber_count == 0
    await bus.aclose()


async def test_a_failing_direct_subscriber_is_logged_counted_and_isolated(caplog: pytest.LogCaptureFixture) -> None:
    bus = InProcessBus()
    before: list[object] = []
    after: list[object] = []
    queued = await collect(bus, "messages")
    bus.subscribe("messages", before.append, direct=True)

    def bad(item: object) -> None:
        raise ValueError("direct subscriber bug")

    sub = bus.subscribe("messages", bad, name="bad", direct=True)
    bus.subscribe("messages", after.append, direct=True)
    with caplog.at_level(logging.ERROR):
        bus.publish(msg("a"))  # does not raise
        bus.publish(msg("b"))
    assert await bus.drain()
    assert len(before) == len(after) == len(queued) == 2
    assert sub.stats.failed == 2
    assert sub.stats.delivered == 0
    assert "direct subscriber bug" in caplog.text
    await bus.aclose()


async def test_publishing_from_a_direct_handler_keeps_publish_order_for_every_subscriber() -> None:
    bus = InProcessBus()
    seen: dict[str, list[str]] = {"first": [], "queued": [], "last": []}

    def first(item: Message) -> None:
        seen["first"].append(item.params.message)
        if item.params.message.isdigit():
            bus.publish(msg(f"reply to {item.params.message}"))  # re-entrant publish

    bus.subscribe("messages", first, direct=True)
    bus.subscribe("messages", lambda m: seen["queued"].append(m.params.message))
    bus.subscribe("messages", lambda m: seen["last"].append(m.params.message), direct=True)
    bus.publish(msg("1"))
    bus.publish(msg("2"))
    assert await bus.drain()
    expected = ["1", "reply to 1", "2", "reply to 2"]
    assert seen == {"first": expected, "queued": expected, "last": expected}
    assert bus.published == 4
    await bus.aclose()


async def test_a_direct_handler_may_subscribe_and_unsubscribe_during_a_delivery() -> None:
    bus = InProcessBus()
    late: list[object] = []
    victim_got: list[object] = []
    victim = bus.subscribe("messages", victim_got.append, direct=True)

    def churn(item: object) -> None:
        victim.close()
        if not late:
            bus.subscribe("messages", late.append, direct=True)

    bus.subscribe("messages", churn, direct=True)  # after the victim: the victim sees the first item only
    bus.publish(msg("a"))
    assert len(victim_got) == 1
    assert late == []  # subscribed during the delivery of "a": sees later items only
    bus.publish(msg("b"))
    assert len(victim_got) == 1
    assert len(late) == 1
    await bus.aclose()


async def test_direct_handlers_must_be_sync() -> None:
    bus = InProcessBus()

    async def handler(item: object) -> None:
        pass

    with pytest.raises(ValueError, match="sync"):
        bus.subscribe("messages", handler, direct=True)

    class Sneaky:  # a callable object whose __call__ is async: only caught when called
        async def __call__(self, item: object) -> None:
            pass

    sub = bus.subscribe("messages", Sneaky(), name="sneaky", direct=True)
    bus.publish(msg("a"))
    assert sub.stats.failed == 1
    assert sub.stats.delivered == 0
    await bus.aclose()


async def test_a_slow_direct_handler_is_counted_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    bus = InProcessBus()
    sub = bus.subscribe("messages", lambda _m: time.sleep(0.01), name="sleepy", direct=True)
    with caplog.at_level(logging.WARNING):
        bus.publish(msg("a"))
        bus.publish(msg("b"))
    assert sub.stats.slow == 2
    assert sub.stats.delivered == 2
    assert caplog.text.count("must not block") == 1
    await bus.aclose()


async def test_direct_handlers_run_on_the_loop_thread_when_others_publish() -> None:
    bus = InProcessBus()
    loop_thread = threading.get_ident()
    seen_threads: set[int] = set()
    got: list[object] = []

    def handler(item: object) -> None:
        seen_threads.add(threading.get_ident())
        got.append(item)

    bus.subscribe("actions", handler, direct=True)

    def worker(n: int) -> None:
        for i in range(100):
            bus.publish(Action.create(from_=f"t{n}", name="gesture", params={"i": i}))

    await asyncio.gather(*(asyncio.to_thread(worker, n) for n in range(4)))
    await wait_until(lambda: len(got) == 400, timeout=1)
    assert seen_threads == {loop_thread}
    await bus.aclose()


async def test_a_direct_handler_publishing_in_reply_forever_does_not_hang_the_loop() -> None:
    bus = InProcessBus()
    got: list[object] = []
    queued = bus.subscribe("messages", lambda _m: None, maxsize=10)

    def echo(item: object) -> None:
        got.append(item)
        bus.publish(msg("again"))

    bus.subscribe("messages", echo, direct=True)
    bus.publish(msg("start"))  # returns after the item and one batch of replies
    assert 0 < len(got) <= 1 + 1000
    ticks = 0
    while len(got) < 5000:  # the loop still runs other work meanwhile
        await asyncio.sleep(0)
        ticks += 1
    assert ticks > 1
    await bus.aclose()
    count = len(got)
    await asyncio.sleep(0.01)
    assert len(got) == count  # and it stops with the bus
    assert queued.stats.dropped > 0  # the queued subscriber stayed bounded: it fell behind and dropped


async def test_no_delivery_after_close_even_from_a_direct_handler() -> None:
    bus = InProcessBus()
    got: list[str] = []

    def closer(item: Message) -> None:
        got.append(item.params.message)
        if item.params.message == "a":
            asyncio.get_running_loop().create_task(bus.aclose())

    bus.subscribe("messages", closer, direct=True)
    bus.publish(msg("a"))
    await asyncio.sleep(0.01)
    bus.publish(msg("b"))
    assert got == ["a"]
