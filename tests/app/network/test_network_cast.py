"""The network follows the cast while Madoi runs: a companion the user adds, edits or removes (app/cards/cast_changes.py
publishes CastChanged) is announced, reserved and published as this app's own, or no longer. A real runtime (the
scripted demo endpoint, the network on loopback) and Madoi's own libp2p nodes as its peers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from app.network.libp2p_node import Libp2pNetwork
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.network.link import NetworkLink
from companions.wire.protocol import Message
from tests.app.madoi_nodes import start_node, subscribed
from tests.companions.network_doubles import Companion, Node
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
KUMO = "metadata: {id: kumo, name: Kumo, personality: Drifts.}\nrole: A cloud.\n"


async def _runtime(monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("MADOI_NETWORK_ENABLED", "true")
    monkeypatch.setenv("MADOI_NETWORK_LISTEN", "/ip4/127.0.0.1/tcp/0")
    monkeypatch.setenv("MADOI_NETWORK_MDNS", "false")
    runtime = Runtime(load_settings())
    await runtime.start()
    return runtime


def _link(runtime: Runtime) -> NetworkLink:
    link = runtime.parts.network
    assert link is not None
    return link


def _card(home: Path, text: str) -> Path:
    folder = home / "companions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kumo.yaml"
    path.write_text(text, encoding="utf-8")
    return path


async def _connect(runtime: Runtime, node: Node[Libp2pNetwork]) -> None:
    """``node`` dials the runtime's node and both hear each other's messages and votes."""
    link = _link(runtime)
    assert isinstance(link.port, Libp2pNetwork)
    node.network.dial(link.status.addresses[0])
    await subscribed(node.network, link.status.peer_id)
    await subscribed(link.port, node.link.status.peer_id)


def _lines(seen: list[Any]) -> list[tuple[str, str]]:
    return [(m.params.from_, m.params.message) for m in seen if isinstance(m, Message)]


async def test_a_companion_added_while_running_is_announced_to_a_peer_connecting_afterwards_and_its_lines_reach_it(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = await _runtime(monkeypatch)
    peer = await start_node(Companion("ren", importance=5), deadline_s=0.3)
    try:
        _card(madoi_home, KUMO)
        assert (await runtime.reload_companions()).added == ("kumo",)
        await _connect(runtime, peer)
        await peer.wait_for(lambda: {"akari", "kumo"} <= peer.manager.present)
        assert peer.link.remote["kumo"].metadata.name == "Kumo"
        assert peer.link.remote["kumo"].metadata.personality == "Drifts."
        runtime.bus.publish(Message.create(from_="kumo", message="I drifted in.", to=["ren"]))
        await peer.wait_for(lambda: ("kumo", "I drifted in.") in peer.lines())
    finally:
        await peer.stop()
        await runtime.stop()


async def test_a_peer_that_announced_a_newly_added_id_loses_it_and_cannot_speak_as_it(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    runtime = await _runtime(monkeypatch)
    link = _link(runtime)
    heard: list[Any] = []
    runtime.bus.subscribe("messages", heard.append, name="test", direct=True)
    peer = await start_node(Companion("kumo", importance=5), deadline_s=0.3)  # the peer runs a "kumo" first
    try:
        await _connect(runtime, peer)
        manager = runtime.parts.conversation_manager
        await wait_until(lambda: "kumo" in link.remote and "kumo" in manager.present, timeout=20, every=0.05)
        peer.bus.publish(Message.create(from_="kumo", message="the peer's kumo", to=["akari"]))
        await wait_until(lambda: ("kumo", "the peer's kumo") in _lines(heard), timeout=20, every=0.05)

        _card(madoi_home, KUMO)  # the user makes a kumo of their own
        with caplog.at_level(logging.INFO, logger="companions.network"):
            assert (await runtime.reload_companions()).added == ("kumo",)
        assert "one of this app's companions now" in caplog.text  # refused and dropped with a log line
        assert "kumo" not in link.remote
        assert [c.id for c in link.listed()] == []
        assert "kumo" in runtime.parts.cast.companions  # this app's kumo stays
        assert "kumo" in manager.present
        assert runtime.parts.cast.guests.metadata() == []  # the prompts name one kumo: this app's

        reserved = link.drops.counts["reserved"]
        peer.bus.publish(Message.create(from_="kumo", message="still me?", to=["akari"]))
        await wait_until(lambda: link.drops.counts["reserved"] > reserved, timeout=20, every=0.05)
        assert ("kumo", "still me?") not in _lines(heard)
        assert "kumo" in runtime.parts.cast.companions
        assert "kumo" in manager.present
    finally:
        await peer.stop()
        await runtime.stop()


async def test_a_madoi_peer_connected_before_follows_adds_edits_and_removals_and_a_removed_one_is_not_served(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = await _runtime(monkeypatch)
    before = await start_node(Companion("ren", importance=5), deadline_s=0.3)
    after: Node[Libp2pNetwork] | None = None
    try:
        await _connect(runtime, before)
        await before.wait_for(lambda: "akari" in before.manager.present)
        assert "kumo" not in before.manager.present

        card = _card(madoi_home, KUMO)
        await runtime.reload_companions()
        await before.wait_for(lambda: "kumo" in before.manager.present)  # told, it asked again

        card.write_text(KUMO.replace("name: Kumo", "name: Kumomo"), encoding="utf-8")
        assert (await runtime.reload_companions()).changed == ("kumo",)
        await before.wait_for(lambda: before.link.remote["kumo"].metadata.name == "Kumomo")

        card.unlink()
        assert (await runtime.reload_companions()).removed == ("kumo",)
        await before.wait_for(lambda: "kumo" not in before.manager.present)
        assert "kumo" not in before.link.remote
        assert "akari" in before.manager.present

        after = await start_node(Companion("mio", importance=5), deadline_s=0.3)
        await _connect(runtime, after)
        await after.wait_for(lambda: "akari" in after.manager.present)
        assert "kumo" not in after.manager.present
        assert "kumo" not in after.link.remote
    finally:
        if after is not None:
            await after.stop()
        await before.stop()
        await runtime.stop()


async def test_a_language_switch_serves_the_companions_names_in_the_new_language(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = await _runtime(monkeypatch)
    before = await start_node(Companion("ren", importance=5), deadline_s=0.3)
    try:
        assert runtime.settings.general.language == "ja"
        await _connect(runtime, before)
        await before.wait_for(lambda: "akari" in before.link.remote)
        assert before.link.remote["akari"].metadata.name == "あかり"
        general = runtime.settings.general.model_copy(update={"language": "en"})
        await runtime.apply_settings(runtime.settings.model_copy(update={"general": general}))
        await before.wait_for(lambda: before.link.remote["akari"].metadata.name == "Akari")
    finally:
        await before.stop()
        await runtime.stop()
