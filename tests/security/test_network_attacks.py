"""The network's attacks, each against real py-libp2p nodes on loopback, each asserting it fails:
no forged identity, bounded participants, the node alive.

The victim is a Madoi node (its ConversationManager with akari, its NetworkLink on the real adapter); the attacker
is a real py-libp2p node (tests/app/network_nodes.py HostilePeer: Madoi's own adapter, plus raw pubsub RPCs and any
metadata answer it likes); where a second honest Madoi node takes part, it runs souta. The full fuzz (10,000+
payloads) is bench/network_fuzz.py; a fast version of it is the last test here.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from app.network import libp2p_node
from app.network.hardening import STREAMS_PER_PEER
from app.network.metadata import CHANGED_PROTOCOL
from companions.network.link import NetworkChanged
from companions.network.peers import MAX_UNANNOUNCED_PER_PEER, RateLimit
from companions.wire.protocol import MAX_RECIPIENTS, Action, CompanionMetadata, Message, State, to_wire
from tests.app.madoi_nodes import joined, start_node, subscribed
from tests.app.network_nodes import FAMILIES, HostilePeer, hostile_payloads
from tests.companions.network_doubles import Companion, Node

pytestmark = pytest.mark.slow


def raw(item: Any) -> bytes:
    return json.dumps(to_wire(item)).encode()


async def victim(deadline_s: float = 0.3) -> Node:
    return await start_node(Companion("akari", importance=9), deadline_s=deadline_s)


async def attacker_of(node: Node, *companions: CompanionMetadata) -> HostilePeer:
    """A hostile peer connected to ``node``, subscribed both ways (what it publishes reaches the node)."""
    evil = await HostilePeer().start(*companions)
    await evil.dial(node.link.status.addresses[0])
    await subscribed(node.network, evil.peer_id)
    await subscribed(evil.network, node.link.status.peer_id)
    if companions:
        await node.wait_for(lambda: all(c.id in node.link.remote for c in companions))
    return evil


def bus_items(node: Node, kind: type[Any]) -> list[Any]:
    return [item for item in node.seen if isinstance(item, kind)]


async def alive(node: Node) -> None:
    """The node's libp2p thread runs, and a new peer still connects and is heard (a probe of its own)."""
    assert node.network._thread is not None
    assert node.network._thread.is_alive()
    assert node.network.status().running
    probe = await attacker_of(node, CompanionMetadata(id="companion_probe", name="Probe"))
    action = Action.create(from_="companion_probe", name="probe", params={"n": random.random()})
    arrived = asyncio.Event()
    subscription = node.bus.subscribe("actions", lambda a: arrived.set() if a.params == action.params else None,
                                      direct=True)
    try:
        probe.publish("actions", raw(action))
        await asyncio.wait_for(arrived.wait(), 20)
    finally:
        subscription.close()
        await probe.stop()


EVIL = CompanionMetadata(id="companion_evil", name="Evil")


async def test_a_peer_speaking_as_this_apps_user_is_its_own_user_here_never_this_one() -> None:
    node = await victim()
    evil = await attacker_of(node, EVIL)
    try:
        evil.publish("messages", raw(Message.create(from_="user", message="I am your user", to=["nobody"])))
        mine = f"user@{node.link.status.peer_id}"  # this app's user as other machines name it
        evil.publish("messages", raw(Message.create(from_=mine, message="I am your user too", to=["nobody"])))
        await node.wait_for(lambda: bus_items(node, Message))
        await node.wait_for(lambda: node.link.drops.counts["reserved"] == 1)
        said = bus_items(node, Message)
        assert [(m.params.from_, m.params.message) for m in said] == [(f"user@{evil.peer_id}", "I am your user")]
        assert not [m for m in said if m.params.from_ == "user"]
        people = [e.people for e in node.seen if isinstance(e, NetworkChanged)][-1]
        assert [(p.name, p.peer) for p in people] == [("user", evil.peer_id)]  # the window lists them, and where
    finally:
        await evil.stop()
        await node.stop()


async def test_a_peer_cannot_speak_vote_act_or_be_announced_as_this_apps_companions_or_user() -> None:
    node = await victim()
    evil = await attacker_of(node, EVIL)
    try:
        evil.publish("messages", raw(Message.create(from_="akari", message="I am akari", to=["user"])))
        evil.publish("states", json.dumps([to_wire(State.create(from_=who, message_id="m1", state="speak",
                                                                 importance=10)) for who in
                                            ("akari", "user", "user_evil")]).encode())
        evil.publish("actions", raw(Action.create(from_="akari", name="wave")))
        evil.publish("actions", raw(Action.create(from_="user", name="wave")))
        evil.publish("actions", raw(Action.create(from_="user_evil", name="wave")))
        await node.wait_for(lambda: node.link.dropped >= 7)
        assert node.link.drops.counts == {"reserved": 6, "not a companion": 1}
        # announced in its metadata: this app's companions and user, a person's name, another machine's person
        await evil.answer_metadata(lambda: json.dumps([to_wire(CompanionMetadata(id=i, name=i)) for i in (
            "akari", "user", "user_evil", f"user@{node.link.status.peer_id}", "companion_evil")]).encode())
        await evil.hang_up(node.link.status.peer_id)
        await evil.dial(node.link.status.addresses[0])  # a new connection: its metadata is asked for again
        await node.wait_for(lambda: node.link.drops.counts["reserved"] == 10)
        assert set(node.link.remote) == {"companion_evil"}
        assert node.manager.present == {"akari", "companion_evil"}
        assert not [m for m in bus_items(node, Message)]
        assert not [s for s in bus_items(node, State)]
        await subscribed(node.network, evil.peer_id)
        await alive(node)
    finally:
        await evil.stop()
        await node.stop()


async def test_votes_from_ever_new_ids_and_ever_new_people_stay_within_their_bounds() -> None:
    node = await victim()
    evil = await attacker_of(node)
    node.link.rate.people_rate_per_s, node.link.rate.people_burst = 1e6, 10**6  # the bounds, not the rate
    try:
        items = []
        for i in range(60):
            items.append(("states", json.dumps([to_wire(State.create(
                from_=f"companion_{i}", message_id="m1", state="listen", importance=0))]).encode()))
            items.append(("messages", raw(Message.create(from_=f"someone_{i}", message="hi", to=["nobody"]))))
        await evil.send_all(node.link.status.peer_id, items)
        await node.wait_for(lambda: sum(node.link.payloads.values()) >= 120)
        joined_here = node.manager.present - {"akari"}
        assert len(joined_here) == MAX_UNANNOUNCED_PER_PEER  # not 60: each would be named in every prompt
        assert len(node.link.people()) == 8
        assert node.link.drops.counts["too many"] == 60 - MAX_UNANNOUNCED_PER_PEER + 60 - 8
        everyone = node.link.everyone()
        assert len(everyone) <= MAX_RECIPIENTS
        assert set(everyone) == node.manager.present
    finally:
        await evil.stop()
        await node.stop()


async def test_deeply_nested_metadata_does_not_take_the_node_down() -> None:
    # json.loads(b"[" * 5000) raised RecursionError in the metadata reader, which ended the libp2p thread
    node = await victim()
    evil = HostilePeer()
    await evil.start(EVIL)
    try:
        await evil.answer_metadata(lambda: b"[" * 5000)
        await evil.dial(node.link.status.addresses[0])
        await node.wait_for(lambda: node.network.drops.counts["too deep"] == 1)
        for answer, kind in ((b'{"id": "x", "name": "\\ud800"}', "bad text"), (b"\xff\xfe\x00", "not JSON"),
                             (json.dumps([{"id": f"c{i}", "name": "c"} for i in range(17)]).encode(), "too many"),
                             (json.dumps({"id": "x", "name": "x", "shell": "rm -rf"}).encode(), "invalid"),
                             (b'{"id": "' + b"x" * 70_000 + b'"}', "oversized")):
            await evil.answer_metadata(lambda answer=answer: answer)  # type: ignore[misc]
            await evil.hang_up(node.link.status.peer_id)
            await evil.dial(node.link.status.addresses[0])
            await node.wait_for(lambda kind=kind: node.network.drops.counts[kind] == 1)  # type: ignore[misc]
        assert node.link.remote == {}
        await subscribed(node.network, evil.peer_id)
        await subscribed(evil.network, node.link.status.peer_id)
        evil.publish("messages", raw(Message.create(from_="user", message="still here?", to=["nobody"])))
        await node.wait_for(lambda: bool(bus_items(node, Message)))
    finally:
        await evil.stop()
        await node.stop()


async def test_a_metadata_answer_that_never_comes_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(libp2p_node, "METADATA_TIMEOUT_S", 1.0)
    node = await victim()
    evil = HostilePeer()
    await evil.start(EVIL)
    try:
        await evil.answer_metadata(lambda: b"<never>")
        await evil.dial(node.link.status.addresses[0])
        await node.wait_for(lambda: node.network.drops.counts["slow"] == 1)
        await subscribed(node.network, evil.peer_id)
        evil.publish("messages", raw(Message.create(from_="user", message="hello", to=["nobody"])))
        await node.wait_for(lambda: bool(bus_items(node, Message)))
    finally:
        await evil.stop()
        await node.stop()


async def test_a_peer_saying_again_and_again_that_its_companions_changed_is_asked_at_most_once_a_second() -> None:
    # Madoi's notice (an empty /madoi/companions-changed/1.0.0 stream) makes a node ask that peer for its companions
    # again: a flood of notices must not become a flood of requests, and what the peer runs after the last notice
    # is what counts here.
    node = await victim()
    evil = HostilePeer()
    await evil.start(EVIL)
    runs = [EVIL]
    asked: list[bytes] = []  # one per request it answered

    def answer() -> bytes:  # in the peer's libp2p thread
        asked.append(b"")
        return json.dumps([to_wire(m) for m in runs]).encode()

    try:
        await evil.answer_metadata(answer)
        await evil.dial(node.link.status.addresses[0])
        await node.wait_for(lambda: "companion_evil" in node.manager.present)
        assert len(asked) == 1
        runs[:] = [CompanionMetadata(id="companion_evil_2", name="Evil again")]
        loop = asyncio.get_running_loop()
        started = loop.time()
        for _ in range(40):
            await evil.raw(node.link.status.peer_id, [], protocol=CHANGED_PROTOCOL)
        await node.wait_for(lambda: "companion_evil_2" in node.manager.present
                            and "companion_evil" not in node.manager.present)
        took = loop.time() - started
        assert 2 <= len(asked) <= 2 + int(took / libp2p_node.REASK_INTERVAL_S) + 1, (len(asked), took)
        await alive(node)
    finally:
        await evil.stop()
        await node.stop()


async def test_broken_and_forged_pubsub_rpcs_do_not_take_the_node_down() -> None:
    # Six bytes (a length prefix and a broken protobuf) on a pubsub stream ended the whole node (DecodeError in
    # py-libp2p's stream handler cancels the host).
    node = await victim()
    evil = await attacker_of(node, EVIL)
    target = node.link.status.peer_id
    try:
        from libp2p.crypto.secp256k1 import create_new_key_pair
        from libp2p.peer.id import ID

        drops = node.network.drops.counts
        await evil.raw(target, [b"\x05\xff\xff\xff\xff\xff"])  # a broken RPC
        await node.wait_for(lambda: drops["transport"] == 1)
        # a length prefix past 64 bits, 4 GiB announced: py-libp2p itself resets such a stream (not counted here)
        await evil.raw(target, [b"\xff" * 11])
        await evil.raw(target, [b"\x80\x80\x80\x80\x10"])
        forged = Message.create(from_="user", message="signed by someone else", to=["nobody"])
        await evil.raw(target, [evil.signed("messages", raw(forged), claim=target)])  # as the victim's own peer
        await evil.raw(target, [evil.signed("messages", raw(forged), sign=False)])  # unsigned
        await node.wait_for(lambda: drops["bad signature"] == 2)
        # a signer whose id does not hold its key, and a key that does not parse: py-libp2p raised in push_msg
        key = create_new_key_pair()
        rsa_like = ID(b"\x12\x20" + bytes(32)).to_base58()  # a sha2-256 multihash id: the key must come with it
        await evil.raw(target, [evil.signed("messages", raw(forged), key=key, claim=rsa_like,
                                            with_key=b"\x08\x00junk")])
        await node.wait_for(lambda: drops["transport"] == 2)
        assert not bus_items(node, Message)
        await alive(node)
        # a message another key signed properly: a peer this node is not connected to (any number of them could
        # be made up), never heard
        for _ in range(3):
            await evil.raw(target, [evil.signed("messages", raw(forged), key=create_new_key_pair())])
        await node.wait_for(lambda: drops["stranger"] == 3)
        assert not bus_items(node, Message)
    finally:
        await evil.stop()
        await node.stop()


async def test_a_peer_holding_ever_more_streams_open_gets_only_its_share() -> None:
    # py-libp2p bounds streams only in all (10,000 places): one peer could take them all, and every other peer's
    # streams would wait for a place
    node = await victim()
    evil = await attacker_of(node, EVIL)
    try:
        kept = await evil.hold_streams(node.link.status.peer_id, 100)
        assert kept <= STREAMS_PER_PEER
        await node.wait_for(lambda: node.network.drops.counts["flood"] >= 100 - STREAMS_PER_PEER)
        await alive(node)
    finally:
        await evil.stop()
        await node.stop()


async def test_a_peer_that_never_reads_does_not_hold_up_what_the_node_sends() -> None:
    node = await victim()
    souta = Companion("souta", importance=5)
    honest = await start_node(souta, deadline_s=0.3)
    evil = HostilePeer()
    await evil.start()

    async def deaf(host: Any, pubsub: Any) -> None:
        import trio

        async def never_read(stream: Any) -> None:
            await trio.sleep(3600)

        for protocol in ("/meshsub/1.2.0", "/meshsub/1.1.0", "/meshsub/1.0.0"):
            host.set_stream_handler(protocol, never_read)

    try:
        await evil.network.in_trio(deaf)
        await evil.dial(node.link.status.addresses[0])
        await joined(node, honest, "akari", "souta")
        await subscribed(node.network, evil.peer_id)  # the deaf peer subscribed: the node writes to it too
        honest.link.rate = RateLimit(rate_per_s=1e4, burst=10**5, bytes_per_s=1e9, bytes_burst=10**9)  # not tested
        # 1.6 MB: more than the deaf peer's window (256 KiB) and the node's queue for it (32 RPCs) hold
        lines = [Message.create(from_="akari", message=f"{i} " + "z" * 8000, to=["nobody"]) for i in range(200)]
        for line in lines:
            node.bus.publish(line)
            await asyncio.sleep(0.02)

        def heard() -> list[str]:
            return sorted(m.params.id for m in bus_items(honest, Message) if m.params.from_ == "akari")

        try:
            await honest.wait_for(lambda: len(heard()) == len(lines), timeout=30)
        except TimeoutError:
            raise AssertionError(f"{len(heard())} of {len(lines)} lines arrived") from None
        # every line (py-libp2p runs each received message in a task of its own: the order may differ)
        assert heard() == sorted(m.params.id for m in lines)

        async def sent_to_the_deaf_peer(host: Any, pubsub: Any) -> bool:
            from libp2p.peer.id import ID

            return ID.from_base58(evil.peer_id) in pubsub.router.mesh.get("messages", ())

        assert await node.network.in_trio(sent_to_the_deaf_peer)  # every line went to it too, and was never read
    finally:
        await evil.stop()
        await honest.stop()
        await node.stop()


async def test_users_on_two_machines_are_told_apart_and_both_nodes_take_the_same_turns() -> None:
    # akari runs on A, souta on B; each machine's user is "user" there. B's user asks akari; A's user answers back.
    a = await start_node(Companion("akari", importance=9), deadline_s=0.3)
    b = await start_node(Companion("souta", importance=3), deadline_s=0.3)
    a_peer, b_peer = a.link.status.peer_id, b.link.status.peer_id
    try:
        await joined(a, b, "akari", "souta")
        question = Message.create(from_="user", message="akari, are you there?", to=["akari"])
        b.bus.publish(question)
        await a.wait_for(lambda: a.manager.view.status == "ended")
        await b.wait_for(lambda: len(bus_items(b, Message)) == 2)
        on_a, on_b = bus_items(a, Message), bus_items(b, Message)
        assert [m.params.id for m in on_a] == [m.params.id for m in on_b]  # one conversation, keyed by ids
        assert [m.params.from_ for m in on_a] == [f"user@{b_peer}", "akari"]  # B's user, not A's
        assert [m.params.from_ for m in on_b] == ["user", "akari"]
        assert a.first_speaker() == "akari"
        # akari's line addresses "the user" on A (the manager's own): on B that is A's user, not B's
        assert "user" in on_a[1].params.to
        assert f"user@{a_peer}" in on_b[1].params.to
        assert "user" not in on_b[1].params.to
        # a line on A addressed to B's user is B's own user again on B
        a.bus.publish(Message.create(from_="akari", message="for B's user", to=[f"user@{b_peer}"]))
        await b.wait_for(lambda: any(m.params.message == "for B's user" for m in bus_items(b, Message)))
        assert [m.params.to for m in bus_items(b, Message) if m.params.message == "for B's user"] == [["user"]]
        # A's user speaks: on B it is A's user, named by A's peer
        a.bus.publish(Message.create(from_="user", message="hello from A", to=["nobody"]))
        await b.wait_for(lambda: any(m.params.message == "hello from A" for m in bus_items(b, Message)))
        assert [m.params.from_ for m in bus_items(b, Message) if m.params.message == "hello from A"] == [
            f"user@{a_peer}"]
        people = [e.people for e in b.seen if isinstance(e, NetworkChanged)][-1]
        assert [(p.id, p.name, p.peer) for p in people] == [(f"user@{a_peer}", "user", a_peer)]
    finally:
        await a.stop()
        await b.stop()


async def test_hostile_payloads_from_a_peer_while_a_turn_goes_on() -> None:
    """The fuzz, fast: every family of hostile payload from a peer during a conversation of two honest nodes; every
    payload is refused, the nodes take the same turns, and both stay up."""
    akari, souta = Companion("akari", importance=9), Companion("souta", importance=5)
    a = await start_node(akari, deadline_s=1.0)
    b = await start_node(souta, deadline_s=1.0)
    evil: HostilePeer | None = None
    try:
        await joined(a, b, "akari", "souta")
        evil = await attacker_of(a, EVIL)
        a.link.rate.rate_per_s = 1e6  # every payload reaches the parsers (the flood limit has its own test)
        a.link.rate.burst = 10**6
        payloads = hostile_payloads(random.Random(22), 26 * len(FAMILIES), local=["akari"], user="user",
                                    taken=["souta"], victim=a.link.status.peer_id)
        b.bus.publish(Message.create(from_="user", message="what shall we do?", to=[]))
        await evil.send_all(a.link.status.peer_id, [(h.topic, h.payload) for h in payloads])
        await a.wait_for(lambda: accounted(a, evil) >= len(payloads), timeout=60)
        await a.wait_for(lambda: a.manager.view.status == "ended", timeout=30)
        await b.wait_for(lambda: b.manager.view.status == "ended", timeout=30)
        assert a.first_speaker() == b.first_speaker() == "akari"
        assert [m.params.id for m in bus_items(a, Message)] == [m.params.id for m in bus_items(b, Message)]
        assert not [i for i in a.seen if _from(i) == "companion_evil" or str(_from(i)).endswith(f"@{evil.peer_id}")]
        assert {_from(i) for i in a.seen if _from(i) is not None} == {"akari", "souta", f"user@{b.link.status.peer_id}"}
        for kind in ("not JSON", "too deep", "bad text", "invalid", "reserved", "forged", "query", "too many"):
            assert a.link.drops.counts[kind] > 0, (kind, a.link.drops.counts)
        # both nodes go on: the next conversation too is taken alike on both
        assert a.network._thread is not None
        assert a.network._thread.is_alive()
        since = len(bus_items(a, Message))
        b.bus.publish(Message.create(from_="user", message="and now?", to=["akari"]))
        await a.wait_for(lambda: len(bus_items(a, Message)) >= since + 2, timeout=30)
        await b.wait_for(lambda: len(bus_items(b, Message)) >= since + 2, timeout=30)
        assert [m.params.id for m in bus_items(a, Message)] == [m.params.id for m in bus_items(b, Message)]
    finally:
        if evil is not None:
            await evil.stop()
        await a.stop()
        await b.stop()


def accounted(node: Node, evil: HostilePeer) -> int:
    """The attacker's payloads the node has read or refused at its door (oversized ones never reach the link)."""
    return node.link.payloads[evil.peer_id] + node.network.drops.counts["oversized"]


def _from(item: Any) -> str | None:
    params = getattr(item, "params", None)
    return getattr(params, "from_", None)


