"""Companions from elsewhere in the window: the roster and the message box's "To" chooser show a companion that
joins through the bridge (a real `websockets` client on loopback) or over the network (a second py-libp2p peer on
loopback), with where it runs, and drop it when it leaves. A real started runtime with scripted companions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot
from websockets.asyncio.client import connect

from app.runtime.panels import RuntimeControl, RuntimeHistory, RuntimePeople, RuntimeRemoteCompanions
from app.runtime.runtime import Runtime
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message, to_wire
from tests.conftest import free_port
from tests.ui.scripted_runtime import scripted_cast, scripted_runtime, until
from ui.chat.panel import ChatPanel
from ui.roster.roster import RosterPanel

KUMO = {"id": "kumo", "name": "Kumo", "personality": "calm, likes clouds", "story": "", "sample": ""}
AYA = CompanionMetadata(id="companion_aya", name="Aya")
SHOTS = os.environ.get("MADOI_SCREENSHOT_DIR")  # read before the madoi_home fixture clears MADOI_* variables


async def _panels(qtbot: QtBot, runtime: Runtime) -> tuple[RosterPanel, ChatPanel]:
    roster = RosterPanel(runtime.bus, RuntimeControl(runtime), RuntimePeople(runtime), RuntimeRemoteCompanions(runtime))
    chat = ChatPanel(runtime.bus, RuntimeHistory(runtime), RuntimePeople(runtime))
    for panel in (roster, chat):
        qtbot.addWidget(panel)
        panel.show()
    roster.resize(260, 360)
    roster.attach()
    await chat.attach()
    return roster, chat


def _to_chooser(chat: ChatPanel) -> list[str]:
    """The names the "To" menu offers, after "Everyone"."""
    return [a.text() for a in chat.address.menu_.actions() if a.data() is not None]


async def test_a_companion_through_the_bridge_is_listed_and_addressable_until_it_disconnects(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))  # the tests' default (0) turns the bridge off
    async with scripted_runtime(scripted_cast()) as runtime:
        roster, chat = await _panels(qtbot, runtime)
        assert roster.companion_ids() == ["akari", "hina", "souta"]
        assert _to_chooser(chat) == ["あかり", "ひな", "颯太"]  # the cards' own names
        roster.list.setCurrentIndex(roster.index_of("hina"))  # type: ignore[arg-type]
        bridge = runtime.parts.bridge
        assert bridge is not None
        async with connect(f"ws://127.0.0.1:{bridge.port}", proxy=None) as ws:
            await ws.send(json.dumps({"topic": "metadata", "body": KUMO}))
            assert json.loads(await ws.recv())["body"] == {"ok": True, "id": "kumo"}
            await until(roster.state_changed, lambda: roster.state_of("kumo") == "listening")
            assert roster.companion_ids() == ["akari", "hina", "souta", "kumo"]
            assert roster.text_of("kumo") == "Kumo\nlistening"
            assert roster.place_of("kumo") == "via bridge"
            assert roster.place_of("akari") == ""
            assert roster.current_id() == "hina"  # rows came, the user's place in the list stayed
            await until(chat.address.changed, lambda: "Kumo" in _to_chooser(chat))
            assert _to_chooser(chat) == ["あかり", "ひな", "颯太", "Kumo"]
            line = Message.create(from_="kumo", message="Hello from the hill.", to=["user"])
            await ws.send(json.dumps({"topic": "messages", "body": to_wire(line)}))
            await until(chat.message_shown, lambda: chat.message_count == 1)
            assert chat.view.bubbles()[0].header.startswith("Kumo")  # its name, not its id
            chat.address.companion_action("kumo").trigger()  # the user writes to Kumo alone
            assert chat.address.text() == "To: Kumo"
            assert chat.address.addressees() == ["kumo"]
            if SHOTS:
                roster.grab().save(str(Path(SHOTS) / "roster-bridge-companion.png"))
        await until(roster.model.modelReset, lambda: "kumo" not in roster.companion_ids())
        assert roster.companion_ids() == ["akari", "hina", "souta"]
        assert roster.current_id() == "hina"
        await until(chat.address.changed, lambda: "Kumo" not in _to_chooser(chat))
        assert chat.address.addressees() == []  # the message goes to everyone again, not to someone gone
        assert chat.address.text() == "To: Everyone"
        roster.detach()
        chat.detach()


async def test_a_companion_on_the_network_is_listed_with_its_peer_and_unreachable_after_it_leaves(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_NETWORK_ENABLED", "true")
    monkeypatch.setenv("MADOI_NETWORK_LISTEN", "/ip4/127.0.0.1/tcp/0")
    monkeypatch.setenv("MADOI_NETWORK_MDNS", "false")
    from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
    from companions.network.link import NetworkLink

    async with scripted_runtime(scripted_cast()) as runtime:
        roster, chat = await _panels(qtbot, runtime)
        network = runtime.parts.network
        assert network is not None
        other = NetworkLink(InProcessBus(), Libp2pNetwork(Libp2pConfig(
            listen="/ip4/127.0.0.1/tcp/0", peers=(network.status.addresses[0],), mdns=False)),
            local=[AYA], user_id="user")
        await other.start()
        peer = other.status.peer_id
        try:
            await until(roster.state_changed, lambda: roster.state_of("companion_aya") == "listening", timeout=20)
            assert roster.text_of("companion_aya") == "Aya\nlistening"
            assert roster.place_of("companion_aya") == f"on {peer[:6]}…{peer[-6:]}"
            await until(chat.address.changed, lambda: "Aya" in _to_chooser(chat))
            if SHOTS:
                roster.grab().save(str(Path(SHOTS) / "roster-network-companion.png"))
        finally:
            await other.stop()
        await until(roster.state_changed, lambda: roster.state_of("companion_aya") == "absent", timeout=20)
        assert roster.text_of("companion_aya") == "Aya\nnot here"
        assert roster.place_of("companion_aya") == f"unreachable (on {peer[:6]}…{peer[-6:]})"
        if SHOTS:
            roster.grab().save(str(Path(SHOTS) / "roster-network-companion-gone.png"))
        await until(chat.address.changed, lambda: "Aya" not in _to_chooser(chat))
        roster.detach()
        chat.detach()
