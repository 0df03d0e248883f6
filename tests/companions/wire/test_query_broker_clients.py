"""Clients asked first: an external responder for a query's type and companion answers before the app's own one,
which answers when the client is gone, fails, or is too slow (its grace); a late client answer still wins."""

from __future__ import annotations

import asyncio

from companions.wire.protocol import Query, QueryResult
from companions.wire.query_broker import IN_PROCESS, QueryBroker, Verdict, client_grace
from tests.companions.query_doubles import EchoResponder


async def opened(broker: QueryBroker, query: Query, timeout: float = 5.0) -> asyncio.Task[QueryResult]:
    task = asyncio.create_task(broker.send_query(query, timeout=timeout))
    await asyncio.sleep(0)  # send_query opens the query before its first wait
    assert broker.is_pending(query.id)
    return task


async def test_a_client_is_asked_before_the_apps_camera_and_its_answer_is_used(broker: QueryBroker) -> None:
    camera = EchoResponder("vision")
    broker.register(camera)
    broker.register_external("bridge:1", ["vision"], companions=["akari"])
    assert broker.responders_for("vision", "akari") == {"bridge:1"}
    assert broker.responders_for("vision", "hina") == {IN_PROCESS}
    query = Query.create(from_="akari", type="vision")
    pending = await opened(broker, query)
    assert broker.submit_result(QueryResult.ok(query.id, {"image": "from the client"}), "bridge:1") is Verdict.ACCEPTED
    assert (await pending).result.body == {"image": "from the client"}  # type: ignore[union-attr]
    assert camera.seen == []  # the app's camera never ran
    assert broker.timer_count == 0
    assert broker.task_count == 0


async def test_another_companions_query_goes_to_the_app_at_once(broker: QueryBroker) -> None:
    camera = EchoResponder("vision")
    broker.register(camera)
    broker.register_external("bridge:1", ["vision"], companions=["akari"], grace_s=30)
    result = await asyncio.wait_for(broker.send_query(Query.create(from_="hina", type="vision")), 1)
    assert result.succeeded
    assert len(camera.seen) == 1


async def test_a_silent_client_costs_only_its_grace_then_the_app_answers(broker: QueryBroker) -> None:
    camera = EchoResponder("vision")
    broker.register(camera)
    broker.register_external("bridge:1", ["vision"], grace_s=0.05)
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await broker.send_query(Query.create(from_="akari", type="vision"), timeout=5)
    assert result.succeeded
    assert 0.05 <= loop.time() - started < 1.0
    assert broker.stats.fallbacks == 1
    assert broker.timer_count == 0


async def test_a_client_that_cannot_answer_hands_over_to_the_app_at_once(broker: QueryBroker) -> None:
    camera = EchoResponder("vision")
    broker.register(camera)
    broker.register_external("bridge:1", ["vision"], grace_s=30)
    query = Query.create(from_="akari", type="vision")
    pending = await opened(broker, query)
    assert broker.submit_result(QueryResult.fail(query.id, "no webcam"), "bridge:1") is Verdict.FELL_BACK
    result = await asyncio.wait_for(pending, 1)
    assert result.succeeded
    assert len(camera.seen) == 1


async def test_a_client_that_disconnects_hands_over_to_the_app_at_once(broker: QueryBroker) -> None:
    camera = EchoResponder("vision")
    broker.register(camera)
    broker.register_external("bridge:1", ["vision"], grace_s=30)
    pending = await opened(broker, Query.create(from_="akari", type="vision"))
    broker.unregister_external("bridge:1")
    assert (await asyncio.wait_for(pending, 1)).succeeded
    assert len(camera.seen) == 1


async def test_a_late_client_answer_stops_the_apps_voice(broker: QueryBroker) -> None:
    voice = EchoResponder("speak", gate=asyncio.Event())  # speaks until cancelled
    broker.register(voice)
    broker.register_external("bridge:1", ["speak"], grace_s=0.01)
    query = Query.create(from_="akari", type="speak", body={"message": ""})
    pending = await opened(broker, query)
    await asyncio.wait_for(voice.started.wait(), 1)  # the client was slow: the app began to speak
    said = QueryResult.ok(query.id, {"duration": 1.0})
    assert broker.submit_result(said, "bridge:1") is Verdict.ACCEPTED
    assert await pending == said
    await asyncio.wait_for(voice.cancelled.wait(), 1)  # the app's speech was cut: one voice only


def test_a_speak_query_gives_the_client_time_to_say_its_line() -> None:
    short = Query.create(from_="akari", type="speak", body={"message": "はい"})
    long = Query.create(from_="akari", type="speak", body={"message": "あ" * 100})
    assert client_grace(Query.create(from_="akari", type="vision"), 3.0) == 3.0
    assert 3.0 < client_grace(short, 3.0) < client_grace(long, 3.0)
    assert client_grace(long, 3.0) >= 3.0 + 100 / 8  # slower than a Japanese voice reads


async def test_a_look_through_a_clients_own_camera_never_falls_back_to_the_apps(broker: QueryBroker) -> None:
    """``clients_only`` (a look the gate let through as the client's camera: companions/trust/policy.py): the client
    failing, silent past its grace, or gone, the app's camera is never asked; with no client at all it fails at once."""
    camera = EchoResponder("vision")
    broker.register(camera)
    broker.register_external("bridge:1", ["vision"], companions=["akari"], grace_s=0.01)
    failing = Query.create(from_="akari", type="vision")
    pending = asyncio.create_task(broker.send_query(failing, timeout=5, clients_only=True))
    await asyncio.sleep(0.05)  # past the client's grace
    assert broker.submit_result(QueryResult.fail(failing.id, "no webcam"), "bridge:1") is Verdict.ACCEPTED
    assert (await asyncio.wait_for(pending, 1)).error == "no webcam"
    gone = asyncio.create_task(broker.send_query(Query.create(from_="akari", type="vision"), timeout=5,
                                                 clients_only=True))
    await asyncio.sleep(0)
    broker.unregister_external("bridge:1")
    assert not (await asyncio.wait_for(gone, 1)).succeeded
    alone = await asyncio.wait_for(broker.send_query(Query.create(from_="akari", type="vision"), clients_only=True), 1)
    assert alone.error == "no client answers 'vision' for akari now"
    assert camera.seen == []
    assert broker.stats.fallbacks == 0
