"""The guests registry (companions/companion/guests.py): companions from elsewhere are present in the cast's roster
while the adapter that added them has them, and leave with them; one place never removes another's."""

from __future__ import annotations

from companions.companion.cast import CompanionCast
from companions.companion.guests import Guests
from companions.network.link import NetworkLink
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata
from tests.companions.network_doubles import PEER, SOUTA, RecordingPort

KUMO = CompanionMetadata(id="kumo", name="Kumo", personality="calm", story="lives on a hill", sample="Clouds.")


async def test_a_peers_companions_are_present_in_the_cast_while_the_peer_is_there() -> None:
    bus = InProcessBus()
    cast = CompanionCast()
    port = RecordingPort()
    link = NetworkLink(bus, port, local=[], user_id="user", guests=cast.guests)
    await link.start()
    try:
        assert port.sink is not None
        port.sink.announced(PEER, (SOUTA,))
        assert [m.id for m in cast.roster()] == ["souta"]  # every local companion's prompt names Souta as present
        assert cast.name_of("souta") == "Souta"
        port.sink.gone(PEER)
        assert cast.roster() == []
        assert cast.name_of("souta") is None
        port.sink.announced(PEER, (SOUTA,))  # back: listed once
        port.sink.announced(PEER, (SOUTA,))
        assert [m.id for m in cast.roster()] == ["souta"]
    finally:
        await link.stop()
        await bus.aclose()
    assert cast.roster() == []  # a network that stops takes its guests with it


def test_one_place_never_removes_anothers_guest() -> None:
    guests = Guests()
    guests.add(KUMO, place="bridge")
    guests.add(SOUTA, place="network")
    guests.remove("kumo", place="network")
    assert [m.id for m in guests.metadata()] == ["kumo", "souta"]
    guests.remove("kumo", place="bridge")
    assert [m.id for m in guests.metadata()] == ["souta"]
    assert "souta" in guests
    assert "kumo" not in guests
    assert len(guests) == 1
