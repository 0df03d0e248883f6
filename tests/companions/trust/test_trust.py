"""The trust policy: who may use what, the user's answers remembered, refusals when nobody answers."""

from __future__ import annotations

import asyncio

from companions.companion.guests import BridgeGuestsChanged, RemoteCompanion
from companions.network.link import NetworkChanged
from companions.network.port import NetworkStatus
from companions.testing.scripted_consent import NO_ANSWER, ScriptedUser
from companions.trust.policy import (
    Answer,
    Capability,
    ConsentRefused,
    ConsentRelay,
    Relation,
    Source,
    TrustDecision,
    TrustDecisionsChanged,
    TrustPolicy,
)
from companions.trust.sources import SourceDirectory
from companions.wire.bus import InProcessBus

SOUTA = Source("souta", Relation.GUEST, "Souta", "network:12D3KooWabc")
EVIL = Source("user_evil", Relation.OTHER)


def events(bus: InProcessBus) -> list[object]:
    seen: list[object] = []
    bus.subscribe("events", seen.append, name="test-events", direct=True)
    return seen


async def test_the_user_and_own_companions_are_never_asked() -> None:
    user = ScriptedUser()
    policy = TrustPolicy(asker=user)
    for source in (Source("user", Relation.USER), Source("akari", Relation.OWN)):
        for capability in Capability:
            assert (await policy.permit(source, capability)).allowed
    assert user.asked == []


async def test_headless_refuses_with_a_reason_a_companion_can_read(bus: InProcessBus) -> None:
    seen = events(bus)
    policy = TrustPolicy(asker=None, bus=bus)
    permission = await policy.permit(SOUTA, Capability.CAMERA, "vision")
    assert not permission.allowed
    assert permission.reason == "Not allowed: Souta may not look through your camera (nobody is at the window to ask)."
    await asyncio.sleep(0)
    assert [e for e in seen if isinstance(e, ConsentRefused)] == [
        ConsentRefused(SOUTA, Capability.CAMERA, permission.reason, "vision")]


async def test_a_policy_built_with_a_relay_asks_whoever_is_connected_now() -> None:
    """The window's prompt comes after the policy was built, and may go: until it is connected, and once it is
    gone, nobody is asked and the request is refused."""
    relay = ConsentRelay()
    policy = TrustPolicy(asker=relay)
    before = await policy.permit(SOUTA, Capability.CAMERA)
    assert before.reason == "Not allowed: Souta may not look through your camera (nobody is at the window to ask)."
    user = ScriptedUser([Answer.ONCE])
    relay.connect(user)
    assert (await policy.permit(SOUTA, Capability.CAMERA)).allowed
    relay.connect(None)
    assert not (await policy.permit(SOUTA, Capability.CAMERA)).allowed
    assert [r.source for r in user.asked] == [SOUTA]


async def test_allow_once_asks_again_next_time() -> None:
    user = ScriptedUser([Answer.ONCE, Answer.NEVER])
    policy = TrustPolicy(asker=user)
    assert (await policy.permit(SOUTA, Capability.CAMERA)).allowed
    assert not (await policy.permit(SOUTA, Capability.CAMERA)).allowed
    assert [r.source for r in user.asked] == [SOUTA, SOUTA]
    user.assert_used_up()


async def test_always_and_never_are_remembered_and_saved_and_can_be_forgotten(bus: InProcessBus) -> None:
    saved: list[tuple[TrustDecision, ...]] = []
    user = ScriptedUser([Answer.ALWAYS, Answer.NEVER, Answer.ONCE])
    policy = TrustPolicy(asker=user, on_change=saved.append, bus=bus)
    seen = events(bus)
    assert (await policy.permit(SOUTA, Capability.CAMERA)).allowed
    assert (await policy.permit(SOUTA, Capability.CAMERA)).allowed  # not asked again
    assert not (await policy.permit(SOUTA, Capability.FILES)).allowed
    assert not (await policy.permit(SOUTA, Capability.FILES)).allowed  # not asked again
    assert len(user.asked) == 2
    assert [(d.source, d.capability, d.decision, d.name) for d in saved[-1]] == [
        ("souta@network:12D3KooWabc", Capability.CAMERA, "always", "Souta"),
        ("souta@network:12D3KooWabc", Capability.FILES, "never", "Souta")]
    # The same companion elsewhere (another machine, the bridge) is someone else until the user says so.
    assert (await policy.permit(Source("souta", Relation.GUEST, "Souta", "bridge"), Capability.CAMERA)).allowed
    assert len(user.asked) == 3
    assert policy.forget("souta@network:12D3KooWabc", Capability.CAMERA)
    assert not policy.forget("souta@network:12D3KooWabc", Capability.CAMERA)
    assert [d.capability for d in saved[-1]] == [Capability.FILES]
    await asyncio.sleep(0)
    assert [e.decisions for e in seen if isinstance(e, TrustDecisionsChanged)] == saved
    user.assert_used_up()


async def test_decisions_from_the_settings_answer_without_asking() -> None:
    user = ScriptedUser()
    policy = TrustPolicy(asker=user, decisions=[
        TrustDecision(source="souta@network:12D3KooWabc", capability=Capability.VOICE, decision="always"),
        TrustDecision(source="user_evil", capability=Capability.TOOLS, decision="never")])
    assert (await policy.permit(SOUTA, Capability.VOICE)).allowed
    refused = await policy.permit(EVIL, Capability.TOOLS, "mcp:files.read")
    assert not refused.allowed
    assert "the user said never" in refused.reason
    assert user.asked == []


async def test_no_answer_in_time_refuses_and_takes_the_prompt_away() -> None:
    user = ScriptedUser([NO_ANSWER])
    policy = TrustPolicy(asker=user, ask_timeout_s=0.05)
    permission = await policy.permit(SOUTA, Capability.CAMERA)
    assert not permission.allowed
    assert "no answer within 0.05 s" in permission.reason
    assert user.open == []
    assert policy.decisions == ()


async def test_a_dismissed_prompt_refuses_and_remembers_nothing() -> None:
    policy = TrustPolicy(asker=ScriptedUser([None]))
    permission = await policy.permit(SOUTA, Capability.VOICE)
    assert not permission.allowed
    assert "dismissed" in permission.reason
    assert policy.decisions == ()


async def test_requests_at_once_share_one_prompt() -> None:
    user = ScriptedUser([Answer.ONCE])
    policy = TrustPolicy(asker=user)
    results = await asyncio.gather(*(policy.permit(SOUTA, Capability.CAMERA) for _ in range(3)))
    assert all(p.allowed for p in results)
    assert len(user.asked) == 1


async def test_a_cancelled_request_leaves_the_prompt_to_the_others() -> None:
    user = ScriptedUser([Answer.ONCE])
    gate = asyncio.Event()

    class SlowUser:
        async def ask(self, request: object) -> Answer | None:
            await gate.wait()
            return await user.ask(request)  # type: ignore[arg-type]

    policy = TrustPolicy(asker=SlowUser())
    first = asyncio.ensure_future(policy.permit(SOUTA, Capability.CAMERA))
    second = asyncio.ensure_future(policy.permit(SOUTA, Capability.CAMERA))
    await asyncio.sleep(0)
    first.cancel()
    gate.set()
    assert (await second).allowed
    assert first.cancelled()
    await policy.aclose()


async def test_the_directory_tells_who_an_id_is(bus: InProcessBus) -> None:
    directory = SourceDirectory(user_id="user", own=lambda: ["akari", "hina"])
    directory.attach(bus)
    bus.publish(NetworkChanged(NetworkStatus(running=True), (RemoteCompanion("souta", "Souta", "12D3KooWabc", True),)))
    bus.publish(BridgeGuestsChanged((RemoteCompanion("kumo", "Kumo", "bridge:3", True),)))
    await asyncio.sleep(0)
    assert directory.source("user").relation is Relation.USER
    assert directory.source("akari").relation is Relation.OWN
    assert directory.source("souta") == SOUTA
    assert directory.source("kumo") == Source("kumo", Relation.GUEST, "Kumo", "bridge")
    assert directory.source("user_evil").relation is Relation.OTHER
    # a user on another machine, as the network names them on this bus
    assert directory.source("user@16Uiu2HAmPeer") == Source("user@16Uiu2HAmPeer", Relation.OTHER, "user",
                                                             "network:16Uiu2HAmPeer")
    bus.publish(BridgeGuestsChanged(()))
    await asyncio.sleep(0)
    assert directory.source("kumo").relation is Relation.OTHER  # gone: no longer a guest
    directory.close()
