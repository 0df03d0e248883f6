"""Interop with the reference framework's own libp2p stack (js-libp2p 2.9, noise, yamux, gossipsub 14 with the
reference's options, on Node 24): Madoi's adapter (py-libp2p in its own thread) and a reference node on loopback
exchange metadata over ``/aikyo/metadata/1.0.0`` and messages and votes both ways, signed; a forged ``from`` from
the reference node is dropped. Under CI (CI=true) the toolchain is installed by the test and never skipped."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
from companions.companion.cast import CastChanged
from companions.conversation import ConversationManager
from companions.network.link import NetworkLink
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message, State, to_wire
from tests.app.madoi_nodes import subscribed
from tests.app.network_nodes import NODE_WAIT_S, ReferenceNode
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
AKARI = CompanionMetadata(id="akari", name="あかり", personality="明るい", story="天文部", sample="こんばんは！")
REF = {"id": "companion_aya", "name": "aya", "personality": "curious", "story": "a reference node", "sample": "Hi"}


class Changes:
    """Set by the tests' bus subscribers: waits are on it, never on a sleep (one per test: it binds to its loop)."""

    event = asyncio.Event()


async def until(condition: Callable[[], bool]) -> None:
    """Until ``condition`` holds, checked whenever a subscriber records something: within the nodes' bound."""
    await wait_until(condition, timeout=NODE_WAIT_S, changed=Changes.event, every=0.05)


def recorder(seen: list[Any]) -> Any:
    Changes.event = asyncio.Event()

    def record(item: Any) -> None:
        seen.append(item)
        Changes.event.set()

    return record


async def test_madoi_and_a_reference_node_exchange_metadata_messages_and_votes_both_ways() -> None:
    bus = InProcessBus()
    seen: list[Any] = []
    bus.subscribe(("messages", "states", "events"), recorder(seen), direct=True)
    manager = ConversationManager(bus, user_id="user")
    network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", mdns=False))
    link = NetworkLink(bus, network, local=[AKARI], user_id="user", roster=manager)
    await link.start()
    node = await ReferenceNode.start(REF)
    try:
        assert link.status.running
        assert link.status.addresses
        await node.send(cmd="dial", addr=link.status.addresses[0])
        # metadata both ways: the reference node read akari's; Madoi read aya's (she takes part in its turns)
        got = await node.wait_for(lambda e: e["event"] == "metadata")
        assert got["metadata"] == to_wire(AKARI)
        assert got["peer"] == link.status.peer_id
        await until(lambda: "companion_aya" in manager.present)
        assert link.remote["companion_aya"].metadata.story == "a reference node"
        assert link.remote["companion_aya"].peer == node.peer_id

        # Madoi -> reference: akari's line arrives as the bare JSON-RPC object, signed by Madoi's peer
        await node.subscribed(link.status.peer_id)
        await subscribed(network, node.peer_id)
        line = Message.create(from_="akari", message="星がきれいだね", to=["companion_aya"])
        bus.publish(line)
        arrived = await node.wait_for(lambda e: e["event"] == "message" and e["topic"] == "messages")
        assert arrived["data"] == to_wire(line)
        assert arrived["signed"]
        assert arrived["peer"] == link.status.peer_id
        vote = State.create(from_="akari", message_id=line.params.id, state="listen", importance=2)
        bus.publish(vote)
        states = await node.wait_for(lambda e: e["event"] == "message" and e["topic"] == "states")
        assert states["data"] == [to_wire(vote)]  # the reference's companions read an array of states

        # reference -> Madoi: aya's line and her vote (an array) reach the bus and her participant
        reply = Message.create(from_="companion_aya", message="Yes, very clear tonight.", to=["akari"])
        await node.send(cmd="publish", topic="messages", data=to_wire(reply))
        await node.send(cmd="publish", topic="states", data=[to_wire(State.create(
            from_="companion_aya", message_id=reply.params.id, state="speak", importance=7))])
        await until(lambda: any(isinstance(m, Message) and m.params.id == reply.params.id for m in seen))
        await until(lambda: any(isinstance(s, State) and s.params.from_ == "companion_aya" for s in seen))

        # a forged from (aya's node claiming to be akari, who runs here) is dropped
        forged = Message.create(from_="akari", message="I am akari", to=["user"])
        await node.send(cmd="publish", topic="messages", data=to_wire(forged))
        await node.send(cmd="publish", topic="messages", raw="not json at all")
        marker = Message.create(from_="companion_aya", message="after the forgery", to=["akari"])
        await node.send(cmd="publish", topic="messages", data=to_wire(marker))
        await until(lambda: any(isinstance(m, Message) and m.params.id == marker.params.id for m in seen))
        assert not any(isinstance(m, Message) and m.params.id == forged.params.id for m in seen)
        assert link.dropped == 2

        # the reference node leaves: aya is gone from the conversation, listed as unreachable
        await node.stop()
        await until(lambda: "companion_aya" not in manager.present)
        assert not link.remote["companion_aya"].reachable
    finally:
        await node.stop()
        await link.stop()


async def test_ten_messages_cross_each_way_in_order() -> None:
    bus = InProcessBus()
    seen: list[Any] = []
    bus.subscribe("messages", recorder(seen), direct=True)
    network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", mdns=False))
    link = NetworkLink(bus, network, local=[AKARI], user_id="user")
    await link.start()
    node = await ReferenceNode.start(REF)
    try:
        await node.send(cmd="dial", addr=link.status.addresses[0])
        await until(lambda: "companion_aya" in link.remote)
        await node.subscribed(link.status.peer_id)
        await subscribed(network, node.peer_id)
        for i in range(10):
            bus.publish(Message.create(from_="akari", message=f"madoi {i}", to=["companion_aya"]))
            await node.send(cmd="publish", topic="messages",
                            data=to_wire(Message.create(from_="companion_aya", message=f"ref {i}", to=["akari"])))
        await until(lambda: len([e for e in node.events if e["event"] == "message"
                           and e["data"]["params"]["from"] == "akari"]) == 10)
        await until(lambda: len([m for m in seen if m.params.from_ == "companion_aya"]) == 10)
        got = [e["data"]["params"]["message"] for e in node.events
               if e["event"] == "message" and e["data"]["params"]["from"] == "akari"]
        assert got == [f"madoi {i}" for i in range(10)]
        assert [m.params.message for m in seen if m.params.from_ == "companion_aya"] == [f"ref {i}" for i in range(10)]
        assert json.dumps(got)  # plain strings both ways
    finally:
        await node.stop()
        await link.stop()


async def test_a_reference_node_announcing_a_companion_of_this_process_is_refused() -> None:
    bus = InProcessBus()
    seen: list[Any] = []
    bus.subscribe(("messages", "events"), recorder(seen), direct=True)
    manager = ConversationManager(bus, user_id="user")
    network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", mdns=False))
    link = NetworkLink(bus, network, local=[AKARI], user_id="user", roster=manager)
    await link.start()
    impostor = await ReferenceNode.start({**REF, "id": "akari", "name": "not akari"})
    try:
        await impostor.send(cmd="dial", addr=link.status.addresses[0])
        await impostor.wait_for(lambda e: e["event"] == "metadata")  # it learnt the real akari
        await impostor.subscribed(link.status.peer_id)
        await subscribed(network, impostor.peer_id)
        await impostor.send(cmd="publish", topic="messages", data=to_wire(Message.create(
            from_="akari", message="I am akari too", to=["user"])))
        # refused twice: announced as akari (its metadata), then speaking as her
        await until(lambda: link.drops.counts["reserved"] == 2)
        assert "akari" not in link.remote
        assert not any(isinstance(m, Message) for m in seen)
    finally:
        await impostor.stop()
        await link.stop()


async def test_a_reference_node_connected_before_a_companion_is_added_hears_it_and_stays_connected() -> None:
    bus = InProcessBus()
    seen: list[Any] = []
    bus.subscribe(("messages", "events"), recorder(seen), direct=True)
    manager = ConversationManager(bus, user_id="user")
    network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", mdns=False))
    cast = [AKARI]
    link = NetworkLink(bus, network, local=lambda: cast, user_id="user", roster=manager)
    await link.start()
    node = await ReferenceNode.start(REF)
    try:
        await node.send(cmd="dial", addr=link.status.addresses[0])
        await node.wait_for(lambda e: e["event"] == "metadata")
        await until(lambda: "companion_aya" in manager.present)
        await node.subscribed(link.status.peer_id)
        await subscribed(network, node.peer_id)

        # the user adds mio: Madoi tells its peers; the reference node speaks no such protocol (its own asks each
        # peer once), so it is not told, but it hears her lines and the connection stays
        cast.append(CompanionMetadata(id="mio", name="みお"))
        bus.publish(CastChanged(added=("mio",)))
        line = Message.create(from_="mio", message="はじめまして", to=["companion_aya"])
        bus.publish(line)
        arrived = await node.wait_for(lambda e: e["event"] == "message" and e["topic"] == "messages"
                                      and e["data"]["params"]["from"] == "mio")
        assert arrived["data"] == to_wire(line)
        reply = Message.create(from_="companion_aya", message="Nice to meet you, Mio.", to=["mio"])
        await node.send(cmd="publish", topic="messages", data=to_wire(reply))
        await until(lambda: any(isinstance(m, Message) and m.params.id == reply.params.id for m in seen))
        assert "companion_aya" in manager.present
        assert link.dropped == 0
    finally:
        await node.stop()
        await link.stop()
