"""The window's list of where each companion runs, against a real started runtime on the network (py-libp2p on
loopback) and a second real peer that joins with its companion and leaves again."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
from app.runtime.panels import RuntimeDevices, RuntimePeople
from app.runtime.runtime import Runtime
from companions.network.link import NetworkLink
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message
from tests.app.madoi_nodes import subscribed
from tests.ui.scripted_runtime import scripted_cast, scripted_runtime, until
from ui.roster.network_panel import NetworkPanel

AYA = CompanionMetadata(id="companion_aya", name="Aya")


def _panel(qtbot: QtBot, runtime: Runtime) -> NetworkPanel:
    panel = NetworkPanel(runtime.bus, RuntimeDevices(runtime).network, RuntimePeople(runtime))
    qtbot.addWidget(panel)
    panel.attach()
    return panel


async def test_the_panel_lists_local_and_remote_companions_and_a_peer_that_leaves(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_NETWORK_ENABLED", "true")
    monkeypatch.setenv("MADOI_NETWORK_LISTEN", "/ip4/127.0.0.1/tcp/0")
    monkeypatch.setenv("MADOI_NETWORK_MDNS", "false")
    async with scripted_runtime(scripted_cast()) as runtime:
        panel = _panel(qtbot, runtime)
        assert not panel.isHidden()
        assert runtime.parts.network is not None
        address = runtime.parts.network.status.addresses[0]
        assert panel.status.text() == f"Network: {address}"
        assert runtime.parts.cast is not None
        here = [f"{c.card.name('en')} — this computer" for c in runtime.parts.cast]  # in the panel's language
        assert len(here) == 3
        assert panel.rows() == here
        other = NetworkLink(InProcessBus(), Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0",
                                                                       peers=(address,), mdns=False)),
                            local=[AYA], user_id="user")
        await other.start()
        peer = other.status.peer_id
        try:
            await until(panel.changed, lambda: len(panel.rows()) == 4, timeout=20)
            assert panel.rows()[3] == f"Aya — {peer[:6]}…{peer[-6:]} (reachable)"
            assert "companion_aya" in runtime.parts.conversation_manager.present  # type: ignore[union-attr]
        finally:
            await other.stop()
        await until(panel.changed, lambda: panel.rows()[3].endswith("(unreachable)"), timeout=20)
        assert "companion_aya" not in runtime.parts.conversation_manager.present  # type: ignore[union-attr]
        panel.detach()


async def test_a_user_on_another_machine_is_listed_and_named_as_a_person_there_never_as_this_user(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_NETWORK_ENABLED", "true")
    monkeypatch.setenv("MADOI_NETWORK_LISTEN", "/ip4/127.0.0.1/tcp/0")
    monkeypatch.setenv("MADOI_NETWORK_MDNS", "false")
    async with scripted_runtime(scripted_cast()) as runtime:
        panel = _panel(qtbot, runtime)
        assert runtime.parts.network is not None
        address = runtime.parts.network.status.addresses[0]
        bus = InProcessBus()
        network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", peers=(address,), mdns=False))
        other = NetworkLink(bus, network, local=[AYA], user_id="user")  # that machine's user is "user" too
        await other.start()
        peer = other.status.peer_id
        try:
            await until(panel.changed, lambda: len(panel.rows()) == 4, timeout=20)
            await subscribed(network, runtime.parts.network.status.peer_id)
            bus.publish(Message.create(from_="user", message="hello from the other machine", to=["nobody"]))
            await until(panel.changed, lambda: len(panel.rows()) == 5, timeout=20)
            assert panel.rows()[4] == f"user — a person on {peer[:6]}…{peer[-6:]}"
            people = RuntimePeople(runtime)
            assert people.name(f"user@{peer}", "en") == f"user · {peer[:6]}…{peer[-6:]}"  # the chat's name for them
            assert people.user_id() == "user"  # this app's user is someone else
        finally:
            await other.stop()
        panel.detach()


async def test_a_network_that_cannot_start_is_shown_with_its_reason_and_the_rest_runs(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_NETWORK_ENABLED", "true")
    monkeypatch.setenv("MADOI_NETWORK_LISTEN", "/ip4/127.0.0.1/tcp/not-a-port")
    async with scripted_runtime(scripted_cast()) as runtime:
        panel = _panel(qtbot, runtime)
        assert panel.status.text().startswith("Network not available (bad listen address")
        assert any(p.startswith("network not available: bad listen address") for p in runtime.loaded.problems)
        assert runtime.parts.conversation_manager is not None  # the companions still talk
        assert len(panel.rows()) == 3
        panel.detach()


async def test_the_panel_is_hidden_when_the_network_is_off(qtbot: QtBot, madoi_home: Path) -> None:
    async with scripted_runtime(scripted_cast()) as runtime:
        panel = _panel(qtbot, runtime)
        assert panel.isHidden()
        assert runtime.parts.network is None
        panel.detach()
