"""The network link follows the casts on both sides (the recording port double; the real adapter and runtime are in
tests/app/network/test_network_cast.py): this app's companions as they are now are served, reserved and published; a
peer's announcement is its whole cast, so what it no longer runs leaves and what it changed is known anew."""

from __future__ import annotations

import json
from typing import Any

from companions.companion.cast import CastChanged
from companions.conversation import ConversationConfig, ConversationManager
from companions.network.link import NetworkLink
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message, State, to_wire
from tests.companions.network_doubles import PEER, SOUTA, Companion, RecordingPort

MIO = CompanionMetadata(id="mio", name="Mio", personality="bright")
KAI = "kai"


async def _link(local: list[CompanionMetadata]) -> tuple[InProcessBus, ConversationManager, NetworkLink,
                                                         RecordingPort, list[Any]]:
    bus = InProcessBus()
    seen: list[Any] = []
    bus.subscribe("messages", seen.append, direct=True)
    manager = ConversationManager(bus, user_id="user", participants=[Companion(m.id, 5) for m in local],
                                  config=ConversationConfig(vote_deadline_s=0.3, turn_cap=1))
    port = RecordingPort()
    link = NetworkLink(bus, port, local=lambda: local, user_id="user", roster=manager)
    await manager.start()
    await link.start()
    return bus, manager, link, port, seen


def _vote(sender: str) -> bytes:
    return json.dumps([to_wire(State.create(from_=sender, message_id="m1", state="listen", importance=1))]).encode()


def _line(sender: str, text: str) -> bytes:
    return json.dumps(to_wire(Message.create(from_=sender, message=text, to=["akari"]))).encode()


async def test_a_peer_announcing_again_loses_what_it_no_longer_runs_and_its_changes_are_known() -> None:
    _bus, manager, link, _port, _seen = await _link([CompanionMetadata(id="akari", name="Akari")])
    try:
        link.announced(PEER, (SOUTA, MIO))
        link.received(PEER, "states", _vote(KAI))  # a companion known only by its vote (its metadata never came)
        assert {"souta", "mio", KAI} <= manager.present

        renamed = SOUTA.model_copy(update={"name": "Souta II", "personality": "restless"})
        link.announced(PEER, (renamed,))  # its cast changed there: mio removed, souta edited
        assert "mio" not in manager.present
        assert "mio" not in link.guests
        assert "mio" not in [c.id for c in link.listed()]
        assert link.guests.name_of("souta") == "Souta II"
        assert link.remote["souta"].description.persona.startswith("restless")
        assert KAI in manager.present  # not announced, so not taken back by an announcement

        link.received(PEER, "messages", _line("mio", "I am back?"))  # not its companion any more: a person there
        assert [p.id for p in link.people()] == [f"mio@{PEER}"]
    finally:
        await link.stop()
        await manager.stop()


async def test_a_companion_added_here_is_served_reserved_and_published_and_the_peers_one_is_dropped() -> None:
    local = [CompanionMetadata(id="akari", name="Akari")]
    bus, manager, link, port, seen = await _link(local)
    try:
        link.announced(PEER, (MIO,))
        assert "mio" in manager.present
        assert port.served == [tuple(local)]

        manager.add_participant(Companion("mio", 5))  # as app/cards/cast_changes.py does first
        local.append(CompanionMetadata(id="mio", name="Mio here"))
        bus.publish(CastChanged(added=("mio",)))
        assert port.served[-1] == tuple(local)  # served from now on (and the peers told)
        assert "mio" not in link.remote
        assert "mio" not in link.guests
        assert link.drops.counts["reserved"] == 1

        link.received(PEER, "messages", _line("mio", "it is still me"))
        assert link.drops.counts["reserved"] == 2
        assert not any(isinstance(m, Message) and m.params.message == "it is still me" for m in seen)

        bus.publish(Message.create(from_="mio", message="hello from here", to=["user"]))
        assert ("messages", "hello from here") in [(t, d["params"]["message"]) for t, d in port.sent]

        local.pop()
        bus.publish(CastChanged(removed=("mio",)))
        assert port.served[-1] == tuple(local)
        link.announced(PEER, (MIO,))  # no longer this app's: the peer may run one
        assert "mio" in link.remote
    finally:
        await link.stop()
        await manager.stop()
