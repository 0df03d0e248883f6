"""The query broker's trust rule: the app's devices answer queries published on the bus by others only for a guest
companion the user allowed; never for the user's id, a ``user_<name>`` id or this app's own companions' ids."""

from __future__ import annotations

import asyncio

import pytest

from companions.companion.guests import BridgeGuestsChanged, RemoteCompanion
from companions.testing.scripted_consent import NO_ANSWER, ScriptedUser
from companions.trust.policy import Answer, Capability, ConsentRefused, Relation, TrustPolicy
from companions.trust.sources import SourceDirectory
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Query, QueryResult
from companions.wire.query_broker import QueryBroker
from tests.companions.query_doubles import Camera


class Setup:
    def __init__(self, bus: InProcessBus, user: ScriptedUser | None, ask_timeout_s: float = 5.0) -> None:
        self.bus = bus
        self.user = user
        self.directory = SourceDirectory(user_id="user", own=lambda: ["akari", "hina"])
        self.directory.attach(bus)
        self.trust = TrustPolicy(asker=user, bus=bus, sources=self.directory.source, ask_timeout_s=ask_timeout_s)
        self.broker = QueryBroker(bus, trust=self.trust)
        self.camera = Camera({"image": "AAAA", "mime": "image/jpeg"})
        self.broker.register(self.camera)
        self.results: dict[str, asyncio.Future[QueryResult]] = {}
        self.refusals: list[ConsentRefused] = []
        bus.subscribe("queries", self._result, name="test-results", direct=True)
        bus.subscribe("events", self._event, name="test-events", direct=True)

    def _result(self, item: object) -> None:
        if isinstance(item, QueryResult) and item.id in self.results and not self.results[item.id].done():
            self.results[item.id].set_result(item)

    def _event(self, item: object) -> None:
        if isinstance(item, ConsentRefused):
            self.refusals.append(item)

    async def start(self) -> Setup:
        await self.broker.start()
        return self

    async def published(self, sender: str, type: str = "vision") -> QueryResult:
        """A query as a bridge client puts it on the bus, and its result as the client gets it."""
        query = Query.create(from_=sender, type=type, body={"message": "hello"} if type == "speak" else {})
        self.results[query.id] = asyncio.get_running_loop().create_future()
        self.bus.publish(query)
        return await asyncio.wait_for(self.results[query.id], 10)

    async def aclose(self) -> None:
        await self.broker.aclose()
        await self.trust.aclose()
        self.directory.close()


async def kumo_joins(bus: InProcessBus) -> None:
    bus.publish(BridgeGuestsChanged((RemoteCompanion("kumo", "Kumo", "bridge:3", True),)))
    await asyncio.sleep(0)


@pytest.mark.parametrize("sender", ["user", "user_evil", "akari", "nobody"])
async def test_a_query_published_as_anyone_but_a_guest_gets_no_picture_and_nobody_is_asked(
        bus: InProcessBus, sender: str) -> None:
    user = ScriptedUser()
    setup = await Setup(bus, user).start()
    await kumo_joins(bus)
    result = await setup.published(sender)
    assert not result.succeeded
    assert result.result is None  # no picture
    assert result.error is not None
    assert "may not look through your camera" in result.error
    assert setup.camera.looks == []
    assert user.asked == []
    assert setup.broker.stats.refused == 1
    await setup.aclose()


async def test_the_app_s_own_companions_ask_through_the_broker_and_are_answered(bus: InProcessBus) -> None:
    user = ScriptedUser()
    setup = await Setup(bus, user).start()
    result = await setup.broker.send_query(Query.create(from_="akari", type="vision"), timeout=5)
    assert result.succeeded
    assert len(setup.camera.looks) == 1
    assert user.asked == []
    await setup.aclose()


async def test_a_guest_looks_once_the_user_allowed_it_once_always_or_never(bus: InProcessBus) -> None:
    user = ScriptedUser([Answer.ONCE, Answer.ALWAYS, Answer.NEVER])
    setup = await Setup(bus, user).start()
    await kumo_joins(bus)

    assert (await setup.published("kumo")).succeeded  # Allow once
    request = user.asked[0]
    assert (request.source.id, request.source.name, request.source.place, request.capability) == (
        "kumo", "Kumo", "bridge", Capability.CAMERA)
    assert (await setup.published("kumo")).succeeded  # asked again: Always
    assert (await setup.published("kumo")).succeeded  # not asked
    assert len(user.asked) == 2
    assert len(setup.camera.looks) == 3

    assert setup.trust.forget("kumo@bridge", Capability.CAMERA)  # revoked in the settings
    refused = await setup.published("kumo")  # asked again: Never
    assert not refused.succeeded
    assert refused.error is not None
    assert "Kumo may not look through your camera (the user said no)" in refused.error
    again = await setup.published("kumo")  # not asked: never
    assert not again.succeeded
    assert len(user.asked) == 3
    assert len(setup.camera.looks) == 3
    assert [r.source.id for r in setup.refusals] == ["kumo", "kumo"]
    user.assert_used_up()
    await setup.aclose()


async def test_a_guest_is_refused_headless_or_without_an_answer_in_time(bus: InProcessBus) -> None:
    headless = await Setup(bus, None).start()
    await kumo_joins(bus)
    result = await headless.published("kumo", "vision")
    assert result.error is not None
    assert "nobody is at the window to ask" in result.error
    await headless.aclose()

    user = ScriptedUser([NO_ANSWER])
    away = await Setup(bus, user, ask_timeout_s=0.1).start()
    await kumo_joins(bus)
    result = await away.published("kumo", "vision")
    assert result.error is not None
    assert "no answer within 0.1 s" in result.error
    assert away.camera.looks == []
    assert user.open == []  # the prompt went away
    await away.aclose()


async def test_a_guest_that_left_is_nobody(bus: InProcessBus) -> None:
    user = ScriptedUser()
    setup = await Setup(bus, user).start()
    await kumo_joins(bus)
    bus.publish(BridgeGuestsChanged(()))
    await asyncio.sleep(0)
    assert setup.directory.source("kumo").relation is Relation.OTHER
    assert not (await setup.published("kumo")).succeeded
    assert user.asked == []
    await setup.aclose()


async def test_a_client_that_answers_for_its_companion_is_not_held_up_by_the_prompt(bus: InProcessBus) -> None:
    """Consent is asked where the app's device would be used: a client asked first answers without a prompt."""
    user = ScriptedUser()
    setup = await Setup(bus, user).start()
    await kumo_joins(bus)
    setup.broker.register_external("bridge:3", ["vision"], companions=["kumo"], grace_s=30)
    query = Query.create(from_="kumo", type="vision")
    setup.results[query.id] = asyncio.get_running_loop().create_future()
    bus.publish(query)
    setup.broker.submit_result(QueryResult.ok(query.id, {"image": "client"}), "bridge:3")
    result = await asyncio.wait_for(setup.results[query.id], 5)
    assert result.succeeded
    assert user.asked == []
    assert setup.camera.looks == []
    await setup.aclose()
