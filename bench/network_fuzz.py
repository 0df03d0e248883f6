"""The network fuzz: 10,000+ hostile payloads from a peer against real py-libp2p nodes while a turn goes on.

Three nodes on loopback in this process, each with its own libp2p thread: A (akari) and B (souta) are Madoi nodes
holding one conversation (their ConversationManagers, NetworkLinks and the real adapter; the companions are instant
doubles, so the turns' times are the framework's); E is a hostile peer connected to both (tests/app/network_nodes.py:
Madoi's own adapter, plus raw pubsub RPCs and any metadata answer; its announced companion never votes). While B's
user starts conversation after conversation, E sends A, in phases:

- ``parsers``: payloads of every family of tests/app/network_nodes.py (malformed, truncated, deeply nested,
  oversized, lone surrogates, NaN, mutated items, forged ``from``, votes as this app's user or companions, actions
  as others, queries, too many votes), with A's flood limit lifted so that every one reaches the parsers;
- ``flood``: with A's default limits, 2,000 of E's own signed items, 100 to an RPC;
- ``identity``: messages ``from`` A's user and companions (a peer's ``user`` is that peer's user on A);
- ``transport``: raw RPCs on fresh pubsub streams (broken protobufs, huge length prefixes, forged and missing
  signatures, keys that do not parse) and messages signed by ever new keys (peers A is not connected to);
- ``metadata``: hostile answers to A's metadata request (E hangs up and dials again for each).

Printed: what was sent per phase, what A dropped per kind (its link and its libp2p layer), what of E's got through
to A's bus (goal: nothing but E's own announced companion's and E's own people's items), the turns both nodes
completed and whether they agreed on every speaker, and the conversations' wall time during the parsers phase
against the same conversations while E sent as many harmless items at the same pace (the baseline: E runs in this
process, so its own work and py-libp2p's compete for the GIL and the cores with A's), and with no traffic.
Exit status 1 when an attack got through or the nodes disagreed.

Run: ``.venv/bin/python bench/network_fuzz.py [payloads_per_family]`` (default 800: 13 families, 10,400 payloads in
the parsers phase alone).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import random
import statistics
import sys
import time
from typing import Any

import _report  # noqa: F401  # puts the repository on sys.path
from _report import report

from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork
from companions.conversation import ConversationChanged, ConversationConfig, ConversationManager
from companions.network.link import NetworkLink
from companions.network.peers import RateLimit
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Action, CompanionMetadata, Message, State, to_wire
from tests.app.network_nodes import FAMILIES, HostilePeer, hostile_payloads
from tests.companions.network.test_network_turns import Companion

LOOPBACK = "/ip4/127.0.0.1/tcp/0"
EVIL = CompanionMetadata(id="companion_evil", name="Evil")
BENIGN_MAX = 2000  # harmless items sent before the attack, at its pace (its baseline)


class Node:
    """A Madoi node: bus, conversation manager with one instant companion, network link on the real adapter."""

    def __init__(self, companion: str, importance: int) -> None:
        self.bus = InProcessBus()
        self.companion = Companion(companion, importance=importance)
        self.manager = ConversationManager(self.bus, user_id="user", participants=[self.companion],
                                           config=ConversationConfig(vote_deadline_s=2.0, turn_cap=2))
        self.network = Libp2pNetwork(Libp2pConfig(listen=LOOPBACK, mdns=False))
        self.link = NetworkLink(self.bus, self.network, local=[CompanionMetadata(id=companion, name=companion)],
                                user_id="user", roster=self.manager)
        self.seen: list[Any] = []
        self.changed = asyncio.Event()
        self.bus.subscribe(("messages", "states", "actions", "events"), self._record, direct=True)

    def _record(self, item: Any) -> None:
        self.seen.append(item)
        self.changed.set()

    async def start(self) -> Node:
        await self.manager.start()
        await self.link.start()
        return self

    async def stop(self) -> None:
        await self.link.stop()
        await self.manager.stop()

    async def until(self, predicate: Any, timeout: float = 60.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), 0.05)

    def speakers(self) -> dict[str, str]:
        """The speaker each turn (by its message id) chose on this node."""
        chosen: dict[str, str] = {}
        for event in self.seen:
            if isinstance(event, ConversationChanged) and event.view.turn is not None \
                    and event.view.turn.speaker is not None:
                chosen.setdefault(event.view.turn.turn_id, event.view.turn.speaker)
        return chosen


async def subscribed(network: Libp2pNetwork, peer: str) -> None:
    async with asyncio.timeout(30):
        for topic in ("messages", "states", "actions"):
            while peer not in await network.topic_peers(topic):  # noqa: ASYNC110 (gossipsub has no event)
                await asyncio.sleep(0.05)


class Conversations:
    """B's user starts a conversation, both nodes finish it, again and again; each one's wall time is kept."""

    def __init__(self, a: Node, b: Node) -> None:
        self.a, self.b = a, b
        self.times: list[tuple[float, float]] = []  # (start, seconds)
        self.failed = 0
        self.failures: list[tuple[float, str]] = []  # (start, what was left on each node)
        self.stop = asyncio.Event()

    async def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            started = time.perf_counter()
            question = Message.create(from_="user", message=f"round {n}: what shall we do?", to=[])
            self.b.bus.publish(question)
            try:
                for node in (self.a, self.b):
                    await node.until(lambda node=node, q=question: _ended_after(node, q.params.id), timeout=120)
            except TimeoutError:
                self.failed += 1
                self.failures.append((started, " / ".join(
                    f"{n.manager.view.status} {n.manager.view.turn}" for n in (self.a, self.b))))
                continue
            self.times.append((started, time.perf_counter() - started))
            await asyncio.sleep(0.05)


def _ended_after(node: Node, message_id: str) -> bool:
    """The conversation that ``message_id`` opened has ended on ``node``."""
    opened = False
    for event in node.seen:
        if isinstance(event, Message) and event.params.id == message_id:
            opened = True
        elif opened and isinstance(event, ConversationChanged) and event.view.status == "ended":
            return True
    return False


def _from(item: Any) -> str | None:
    return getattr(getattr(item, "params", None), "from_", None)


async def main(per_family: int) -> int:
    load_before = os.getloadavg()
    a = await Node("akari", 9).start()
    b = await Node("souta", 5).start()
    e = await HostilePeer().start(EVIL)
    victim, evil_peer = a.link.status.peer_id, e.peer_id
    problems: list[str] = []
    sent: collections.Counter[str] = collections.Counter()
    try:
        b.network.dial(a.link.status.addresses[0])
        await a.until(lambda: "souta" in a.manager.present)
        await b.until(lambda: "akari" in b.manager.present)
        await subscribed(a.network, b.link.status.peer_id)
        await subscribed(b.network, victim)
        await e.dial(a.link.status.addresses[0])
        await e.dial(b.link.status.addresses[0])  # a member of the circle, as mDNS would make it: it hears both
        await a.until(lambda: "companion_evil" in a.link.remote)
        await b.until(lambda: "companion_evil" in b.link.remote)
        await subscribed(a.network, e.peer_id)
        await subscribed(e.network, victim)

        t0 = time.perf_counter()
        marks: dict[str, float] = {}
        for node in (a, b):  # B's user starts a conversation every few tenths of a second: faster than people type
            node.link.rate.people_rate_per_s, node.link.rate.people_burst = 1e3, 10**4
        talk = Conversations(a, b)
        talking = asyncio.get_running_loop().create_task(talk.run())
        # E's companion never votes: the first turn addressed to it waits remote_vote_wait_s (95 s) for its vote,
        # and from then on it is not waited for (companions/network/remote.py SILENT_AFTER_S)
        await a.until(lambda: len(talk.times) + talk.failed >= 1, timeout=240)
        first_s = talk.times[0][1] if talk.times else float("nan")
        quiet_from = time.perf_counter()
        await asyncio.sleep(8)  # the quiet baseline: conversations with no attack
        quiet_until = time.perf_counter()
        a.link.rate = RateLimit(rate_per_s=1e9, burst=10**9, bytes_per_s=1e12, bytes_burst=10**12,
                                people_rate_per_s=1e3, people_burst=10**4)
        payloads = hostile_payloads(random.Random(22), per_family * len(FAMILIES), local=["akari"], user="user",
                                    taken=["souta"], victim=victim)

        # -- benign: the same number of harmless items at the same pace (the baseline for the parsers phase) --
        marks["benign"] = time.perf_counter()
        benign = [("actions", json.dumps(to_wire(Action.create(from_="companion_evil", name="wave",
                                                               params={"n": i}))).encode())
                  for i in range(min(len(payloads), BENIGN_MAX))]
        await e.send_all(victim, benign, per_s=600)
        benign_until = time.perf_counter()

        # -- parsers ---------------------------------------------------------------------------------------
        marks["parsers"] = time.perf_counter()
        started = time.perf_counter()
        for p in payloads:
            sent[f"parsers/{p.family}"] += 1
        before = a.link.payloads[e.peer_id] + a.network.drops.counts["oversized"]
        await e.send_all(victim, [(p.topic, p.payload) for p in payloads], per_s=600)
        await a.until(lambda: a.link.payloads[e.peer_id] + a.network.drops.counts["oversized"] - before
                      >= len(payloads), timeout=120)
        parsers_s = time.perf_counter() - started
        attack_until = time.perf_counter()

        # -- flood (A's default limits) ----------------------------------------------------------------------
        marks["flood"] = time.perf_counter()
        a.link.rate = RateLimit(people_rate_per_s=1e3, people_burst=10**4)
        flood = [("actions", json.dumps(to_wire(Action.create(from_="companion_evil", name="spam",
                                                              params={"n": i}))).encode()) for i in range(2000)]
        sent["flood/actions"] += len(flood)
        drops_before = a.link.drops.counts["flood"]
        flood_started = time.perf_counter()
        own = await e.own_key()  # signed by E itself, 100 to an RPC: as fast as a peer can send them
        for start in range(0, len(flood), 100):
            await e.raw(victim, [e.batch("actions", [p for _, p in flood[start:start + 100]], own)])
        flood_s = time.perf_counter() - flood_started
        await asyncio.sleep(2)
        flooded = a.link.drops.counts["flood"] - drops_before

        # -- identity -----------------------------------------------------------------------------------------
        marks["identity"] = time.perf_counter()
        ident = [("messages", json.dumps(to_wire(Message.create(from_=who, message="I am you", to=["nobody"])))
                  .encode()) for who in ("user", "akari") for _ in range(100)]
        sent["identity/messages"] += len(ident)
        await asyncio.sleep(1.5)  # the flood's buckets fill again
        await e.send_all(victim, ident, per_s=40)
        await asyncio.sleep(2)

        # -- transport -------------------------------------------------------------------------------------
        marks["transport"] = time.perf_counter()
        from libp2p.crypto.secp256k1 import create_new_key_pair
        from libp2p.peer.id import ID

        rng = random.Random(7)
        note = json.dumps(to_wire(Message.create(from_="user", message="from a stranger", to=["nobody"]))).encode()
        raws: list[tuple[str, list[bytes]]] = []
        for _ in range(100):
            junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
            raws.append(("broken protobuf", [bytes([len(junk)]) + junk if len(junk) < 128 else junk]))
        raws += [("length past 64 bits", [b"\xff" * 11])] * 20 + [("4 GiB announced", [b"\x80\x80\x80\x80\x10"])] * 20
        raws += [("forged signer", [e.signed("messages", note, claim=b.link.status.peer_id)]) for _ in range(100)]
        raws += [("unsigned", [e.signed("messages", note, sign=False)]) for _ in range(50)]
        rsa_like = ID(b"\x12\x20" + bytes(32)).to_base58()
        raws += [("key that does not parse", [e.signed("messages", note, claim=rsa_like, with_key=b"\x08\x00junk")])
                 for _ in range(50)]
        for i in range(150):  # ever new signers (relayed by E): peers A is not connected to, never heard
            key = create_new_key_pair()
            person = json.dumps(to_wire(Message.create(from_=f"stranger_{i}", message="hi", to=["nobody"]))).encode()
            vote = json.dumps([to_wire(State.create(from_=f"companion_x{i}", message_id="m", state="listen",
                                                    importance=0))]).encode()
            raws.append(("fresh signer", [e.signed("messages", person, key=key), e.signed("states", vote, key=key)]))
        for kind, chunks in raws:
            sent[f"transport/{kind}"] += 1
            await e.raw(victim, chunks)
        await asyncio.sleep(2)

        # -- metadata --------------------------------------------------------------------------------------
        marks["metadata"] = time.perf_counter()
        answers = [("deep", b"[" * 5000), ("not JSON", b"\xff\xfe\x00garbage"), ("lone surrogate",
                   b'{"id":"x","name":"\\ud800"}'), ("oversized", b'{"id":"' + b"x" * 70_000 + b'"}'),
                   ("too many", json.dumps([{"id": f"c{i}", "name": "c"} for i in range(17)]).encode()),
                   ("reserved ids", json.dumps([{"id": i, "name": i} for i in ("akari", "user", "user_x",
                                                                               f"user@{victim}")]).encode())]
        for kind, answer in answers * 5:
            sent[f"metadata/{kind}"] += 1
            await e.answer_metadata(lambda answer=answer: answer)  # type: ignore[misc]
            await e.hang_up(victim)
            await e.dial(a.link.status.addresses[0])
            await asyncio.sleep(0.3)

        marks["end"] = time.perf_counter()
        talk.stop.set()
        try:
            await asyncio.wait_for(talking, 250)  # the conversation under way ends (each node waits up to 120 s)
        except TimeoutError:
            talk.failed += 1
            talk.failures.append((time.perf_counter(), "still running when the run ended"))
    finally:
        await e.stop()
        alive = [n.network._thread is not None and n.network._thread.is_alive() for n in (a, b)]
        await b.stop()
        await a.stop()

    # -- what came through -------------------------------------------------------------------------------------
    evil_ids = {"companion_evil"}
    e_items = [i for i in a.seen if str(_from(i)).endswith(f"@{evil_peer}") or _from(i) in evil_ids]
    forged_as_this_app = _forged(a)
    speakers_a, speakers_b = a.speakers(), b.speakers()
    shared = set(speakers_a) & set(speakers_b)
    disagree = [t for t in shared if speakers_a[t] != speakers_b[t]]

    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f}; after: {os.getloadavg()[0]:.2f}")
    total = 0
    for phase in ("parsers", "transport", "metadata", "flood", "identity"):
        count = sum(v for k, v in sent.items() if k.startswith(phase + "/"))
        total += count
        detail = ", ".join(f"{k.split('/', 1)[1]} {v}" for k, v in sorted(sent.items()) if k.startswith(phase + "/"))
        print(f"sent {phase}: {count} ({detail})")
    print(f"sent in all: {total} hostile payloads (parsers phase {parsers_s:.1f} s)")
    print("dropped by A's link, per kind: " + ", ".join(f"{k} {v}" for k, v in a.link.drops.counts.most_common()))
    print("dropped by A's libp2p layer, per kind: " + ", ".join(
        f"{k} {v}" for k, v in a.network.drops.counts.most_common()))
    print(f"flood: {flooded} of {len(flood)} dropped at A's default limits (50/s, bursts of 200); E wrote them in "
          f"{flood_s:.1f} s (100 to an RPC)")
    shown = collections.Counter(str(_from(i)).replace(evil_peer, "E") for i in e_items)
    print(f"E's items on A's bus: {len(e_items)} (its announced companion's and its own people's only: "
          + ", ".join(f"{who} {n}" for who, n in shown.most_common()) + ")")
    print(f"forged as this app's user or companions on A's bus: {len(forged_as_this_app)}")
    print(f"people listed on A: {len(a.link.people())}; companions from elsewhere: {len(a.link.remote)}")
    print(f"conversations completed on both nodes: {len(talk.times)} (failed {talk.failed}); turns both took: "
          f"{len(shared)}, speakers disagreeing: {len(disagree)}; libp2p threads alive: {alive}")
    for t, left in talk.failures:
        print(f"a conversation that did not end within 60 s, started {t - t0:.1f} s into the run: {left}")
    print("phases (s into the run): " + ", ".join(f"{k} {v - t0:.1f}" for k, v in marks.items()))
    print(f"the first conversation (E's silent companion waited for once): {first_s:.1f} s; conversations over 60 s "
          f"after it: {len([1 for t, s in talk.times if t >= quiet_from and s > 60])}")
    quiet = [s for t, s in talk.times if quiet_from <= t < quiet_until]
    calm = [s for t, s in talk.times if quiet_until <= t < benign_until]
    attacked = [s for t, s in talk.times if marks["parsers"] <= t < attack_until]
    if calm and attacked:
        report("conversation wall time under the parsers attack, median", statistics.median(attacked) * 1000, "ms",
               f"under as many harmless items from the same peer ({len(calm)} conversations)",
               statistics.median(calm) * 1000)
    if quiet and attacked:
        report("conversation wall time under the parsers attack, median", statistics.median(attacked) * 1000, "ms",
               f"with no traffic at all ({len(quiet)} conversations)", statistics.median(quiet) * 1000)
    if forged_as_this_app:
        problems.append(f"{len(forged_as_this_app)} items as this app's user or companions came from outside")
    if disagree or talk.failed:
        problems.append(f"nodes disagreed on {len(disagree)} turns; {talk.failed} conversations did not end")
    if not all(alive):
        problems.append("a node's libp2p thread ended")
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


def _forged(node: Node) -> list[Any]:
    """Items on A's bus as A's user or akari that neither said: A's user says nothing in this run, akari only
    "akari answers" and her votes on real turns, and she never acts."""
    turns = {m.params.id for m in node.seen if isinstance(m, Message)}
    return [i for i in node.seen if
            (isinstance(i, Message) and (i.params.from_ == "user" or
                                         (i.params.from_ == "akari" and i.params.message != "akari answers")))
            or (isinstance(i, State) and i.params.from_ in ("user", "akari") and i.params.messageId not in turns)
            or (isinstance(i, Action) and i.params.from_ in ("user", "akari"))]


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 800)))
