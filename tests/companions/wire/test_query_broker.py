"""The query broker: results, timeouts, cancellation, strays, duplicates, wrong responders, unknown types, leaks."""

from __future__ import annotations

import asyncio
import time

import pytest

from companions.trust.policy import Capability, Relation, Source, TrustDecision, TrustPolicy
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Query, QueryResult
from companions.wire.query_broker import IN_PROCESS, QueryBroker, Verdict
from tests.companions.query_doubles import EchoResponder


def q(type: str = "vision", **body: object) -> Query:
    return Query.create(from_="companion_a", type=type, body=dict(body) or None)


async def test_in_process_responder_answers_and_result_is_published(bus: InProcessBus, broker: QueryBroker) -> None:
    seen: list[object] = []
    bus.subscribe("queries", seen.append)
    broker.register(EchoResponder("speak"))
    query = q("speak", message="hello")
    result = await broker.send_query(query)
    assert result.succeeded
    assert result.result is not None
    assert result.result.body == {"echo": {"message": "hello"}}
    assert await bus.drain()
    assert seen == [query, result]  # observers see the query and its result on the "queries" topic
    assert (broker.pending_count, broker.timer_count, broker.task_count) == (0, 0, 0)


async def test_unknown_type_fails_at_once_not_after_the_timeout(broker: QueryBroker) -> None:
    started = time.monotonic()
    result = await broker.send_query(q("smell"), timeout=30)
    assert time.monotonic() - started < 1
    assert result.error == "unsupported query type: smell"
    assert broker.stats.unsupported == 1
    assert broker.timer_count == 0


async def test_timeout_gives_an_error_result_and_clears_the_entry(broker: QueryBroker) -> None:
    broker.register_external("bridge:1", ["vision"])  # an external responder that never answers
    result = await broker.send_query(q(), timeout=0.05)
    assert result.error is not None
    assert "timed out after 0.05 s" in result.error
    assert (broker.pending_count, broker.timer_count, broker.stats.timed_out) == (0, 0, 1)


async def test_default_timeout_is_30_s_and_per_call_override_wins(bus: InProcessBus) -> None:
    assert QueryBroker(bus).default_timeout == 30.0
    broker = QueryBroker(bus, default_timeout=0.05)
    broker.register_external("bridge:1", ["vision"])
    assert "0.05 s" in ((await broker.send_query(q())).error or "")
    assert "0.02 s" in ((await broker.send_query(q(), timeout=0.02)).error or "")
    await broker.aclose()


async def test_external_result_resolves_only_from_the_allowed_responder(broker: QueryBroker) -> None:
    broker.register_external("bridge:1", ["vision"])
    broker.register_external("bridge:2", ["speak"])
    query = q()
    pending = asyncio.ensure_future(broker.send_query(query))
    await asyncio.sleep(0)
    assert broker.is_pending(query.id)
    assert broker.submit_result(QueryResult.ok(query.id, {"image": "forged"}), "bridge:2") is Verdict.NOT_ALLOWED
    assert broker.submit_result(QueryResult.ok(query.id, {"image": "forged"}), IN_PROCESS) is Verdict.NOT_ALLOWED
    assert broker.submit_result(QueryResult.ok(query.id, {"image": "real"}), "bridge:1") is Verdict.ACCEPTED
    result = await pending
    assert result.result is not None
    assert result.result.body == {"image": "real"}
    assert broker.stats.rejected == 2
    assert broker.stats.resolved == 1


async def test_duplicates_and_strays_are_counted_and_dropped(broker: QueryBroker) -> None:
    broker.register_external("bridge:1", ["vision"])
    query = q()
    pending = asyncio.ensure_future(broker.send_query(query))
    await asyncio.sleep(0)
    assert broker.submit_result(QueryResult.ok(query.id, {"n": 1}), "bridge:1") is Verdict.ACCEPTED
    assert broker.submit_result(QueryResult.ok(query.id, {"n": 2}), "bridge:1") is Verdict.DUPLICATE
    assert broker.submit_result(QueryResult.ok("never-sent", {}), "bridge:1") is Verdict.STRAY
    result = await pending
    assert result.result is not None
    assert result.result.body == {"n": 1}
    assert (broker.stats.duplicates, broker.stats.strays) == (1, 1)


async def test_anonymous_results_on_the_bus_cannot_answer(bus: InProcessBus, broker: QueryBroker) -> None:
    broker.register_external("bridge:1", ["vision"])
    query = q()
    pending = asyncio.ensure_future(broker.send_query(query, timeout=0.2))
    await asyncio.sleep(0)
    bus.publish(QueryResult.ok(query.id, {"image": "forged"}))
    result = await pending
    assert result.error is not None
    assert "timed out" in result.error
    assert broker.stats.unattributed == 1


async def test_cancelling_the_caller_removes_entry_timer_and_responder_task(broker: QueryBroker) -> None:
    responder = EchoResponder("vision", gate=asyncio.Event())
    broker.register(responder)
    task = asyncio.ensure_future(broker.send_query(q()))
    await asyncio.wait_for(responder.started.wait(), 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(responder.cancelled.wait(), 1)
    assert (broker.pending_count, broker.timer_count, broker.stats.cancelled) == (0, 0, 1)


async def test_a_failing_responder_becomes_an_error_result(broker: QueryBroker) -> None:
    broker.register(EchoResponder("vision", fail=True))
    result = await broker.send_query(q())
    assert result.error == "vision responder failed: camera unplugged"
    assert broker.stats.responder_failures == 1


async def test_in_process_responder_answers_queries_published_by_others_once_allowed(bus: InProcessBus) -> None:
    """A guest companion's query (the bridge publishes it) that the user allowed always (trust tests:
    test_query_broker_trust.py)."""
    guest = Source("companion_a", Relation.GUEST, "A", "bridge")
    trust = TrustPolicy(sources=lambda _id: guest, decisions=[
        TrustDecision(source=guest.key, capability=Capability.VOICE, decision="always")])
    broker = QueryBroker(bus, trust=trust)
    await broker.start()
    broker.register(EchoResponder("speak"))
    results: list[QueryResult] = []
    done = asyncio.Event()

    def on_item(item: object) -> None:
        if isinstance(item, QueryResult):
            results.append(item)
            done.set()

    bus.subscribe("queries", on_item)
    query = q("speak", message="hi")
    bus.publish(query)  # e.g. a bridge client's query
    await asyncio.wait_for(done.wait(), 1)
    assert results[0].id == query.id
    assert results[0].succeeded
    assert broker.stats.observed == 1
    assert broker.pending_count == 0
    await broker.aclose()


async def test_disconnecting_the_only_responder_fails_its_queries_at_once(broker: QueryBroker) -> None:
    broker.register_external("bridge:1", ["vision"])
    pending = asyncio.ensure_future(broker.send_query(q(), timeout=30))
    await asyncio.sleep(0)
    broker.unregister_external("bridge:1")
    result = await asyncio.wait_for(pending, 1)
    assert result.error == "the responder for query type 'vision' disconnected"
    assert broker.timer_count == 0


async def test_aclose_fails_every_pending_query(bus: InProcessBus) -> None:
    broker = QueryBroker(bus)
    broker.register_external("bridge:1", ["vision"])
    broker.register(EchoResponder("speak", gate=asyncio.Event()))
    pending = [asyncio.ensure_future(broker.send_query(q(t))) for t in ("vision", "speak", "vision")]
    await asyncio.sleep(0)
    await broker.aclose()
    results = await asyncio.gather(*pending)
    assert [r.error for r in results] == ["the query broker shut down"] * 3
    assert (broker.pending_count, broker.timer_count, broker.task_count) == (0, 0, 0)
    assert (await broker.send_query(q())).error == "the query broker is closed"


async def test_a_second_in_process_responder_for_a_type_is_refused(broker: QueryBroker) -> None:
    broker.register(EchoResponder("speak"))
    with pytest.raises(ValueError, match="already registered"):
        broker.register(EchoResponder("speak"))


async def test_no_leak_after_10000_timed_out_queries(bus: InProcessBus, broker: QueryBroker) -> None:
    broker.register_external("bridge:1", ["vision"])
    started = time.monotonic()
    results = await asyncio.gather(*(broker.send_query(q(), timeout=0.001) for _ in range(10_000)))
    assert all(r.error is not None and "timed out" in r.error for r in results)
    assert broker.stats.timed_out == 10_000
    assert (broker.pending_count, broker.timer_count, broker.task_count) == (0, 0, 0)
    assert await bus.drain(timeout=10)
    assert not broker._own  # every query and result it published came back and was recognised
    assert broker.stats.observed == 0
    assert time.monotonic() - started < 10


async def test_a_query_published_by_others_is_pending_when_publish_returns(bus: InProcessBus,
                                                                          broker: QueryBroker) -> None:
    broker.register_external("client-1", ["vision"])
    seen: list[object] = []
    bus.subscribe("queries", seen.append, name="observer", direct=True)
    query = q("vision")
    bus.publish(query)  # the broker's subscription is direct: no task hop before the query is known
    assert broker.is_pending(query.id)
    assert broker.timer_count == 1
    bus.publish(q("unknown-type"))  # fails at once; observers see the query, then its result, in order
    assert [type(item).__name__ for item in seen] == ["Query", "Query", "QueryResult"]
    assert broker.submit_result(QueryResult.ok(query.id, {}), "client-1").value == "accepted"
    assert isinstance(seen[-1], QueryResult)
    assert seen[-1].id == query.id
    assert (broker.pending_count, broker.timer_count) == (0, 0)
