"""Helpers for the network tests: the reference's own libp2p stack as a subprocess (tests/interop_node/node.mjs on
Node 24, prepared by scripts/interop_node.py), driven over its stdin/stdout; and a hostile peer (a real py-libp2p
node that sends what no peer should, up to raw pubsub RPCs)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pytest

from scripts.script_modules import load_script

# How long a reference node may take to show what a test waits for. A quiet machine needs 1-3 s; in `./test` these
# tests run in the heavy lane beside the other one, and a 20 s bound ran out once on a fresh clone (2 cores, loaded).
NODE_WAIT_S: Final = 60.0


def interop_toolchain() -> Any:
    """The prepared node and script; skipped on a developer's machine without npm, never under CI."""
    module = load_script("interop_node")
    try:
        return module.prepare()
    except module.ToolchainMissing as err:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the reference's node toolchain is not available: {err}")


class ReferenceNode:
    """One peer of the reference's stack; ``events`` keeps everything it printed."""

    def __init__(self, proc: asyncio.subprocess.Process, ready: dict[str, Any]) -> None:
        self.proc = proc
        self.peer_id: str = ready["peerId"]
        self.address: str = ready["addrs"][0]
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, metadata: dict[str, str]) -> ReferenceNode:
        toolchain = interop_toolchain()
        proc = await asyncio.create_subprocess_exec(
            str(toolchain.node), str(toolchain.script), json.dumps(metadata), cwd=toolchain.script.parent,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        ready = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        assert ready["event"] == "ready", ready
        return cls(proc, ready)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.events.append(json.loads(line))
            self._changed.set()

    async def send(self, **command: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + "\n").encode())
        await self.proc.stdin.drain()

    async def wait_for(self, match: Callable[[dict[str, Any]], bool], timeout: float = NODE_WAIT_S, *,
                       since: int = 0) -> dict[str, Any]:
        """The first event from index ``since`` on that ``match`` accepts."""
        async with asyncio.timeout(timeout):
            while True:
                for event in self.events[since:]:
                    if match(event):
                        return event
                self._changed.clear()
                await self._changed.wait()

    async def subscribed(self, peer: str, topic: str = "messages", timeout: float = NODE_WAIT_S) -> None:
        """Waits until this node has seen ``peer`` subscribe to ``topic`` (gossipsub's exchange after connecting)."""
        async with asyncio.timeout(timeout):
            while True:
                asked = len(self.events)
                await self.send(cmd="peers", topic=topic)
                answer = await self.wait_for(lambda e: e["event"] == "peers", since=asked)
                if peer in answer["peers"]:
                    return
                await asyncio.sleep(0.05)

    async def stop(self) -> None:
        if self.proc.returncode is None:
            try:
                await self.send(cmd="stop")
                await asyncio.wait_for(self.proc.wait(), 10)
            except (TimeoutError, ConnectionError):
                self.proc.kill()
                await self.proc.wait()
        self._reader.cancel()


# -- a hostile peer: a real py-libp2p node (Madoi's own adapter) that also writes raw pubsub RPCs -------------------

class HostileSink:
    """What the hostile node hears: nothing it needs."""

    def received(self, peer: str, topic: str, payload: bytes) -> None:
        return None

    def announced(self, peer: str, companions: Any) -> None:
        return None

    def gone(self, peer: str) -> None:
        return None


class HostilePeer:
    """A peer that sends what a peer should not: signed gossipsub messages with any payload on any topic
    (:meth:`publish`), raw RPCs on its own pubsub stream to the victim (:meth:`raw`: broken protobufs, forged or
    fresh signers, huge length prefixes), and any answer to the victim's metadata request (:meth:`answer_metadata`).
    It runs Madoi's own adapter (py-libp2p in a thread of its own), so its connection is as real as any peer's."""

    def __init__(self) -> None:
        from app.network.libp2p_node import Libp2pConfig, Libp2pNetwork

        self.network = Libp2pNetwork(Libp2pConfig(listen="/ip4/127.0.0.1/tcp/0", mdns=False))
        self.sink = HostileSink()
        self._metadata: Callable[[], bytes] | None = None
        self._seq = 0
        self._held: list[Any] = []

    async def start(self, *companions: Any) -> HostilePeer:
        await self.network.start(self.sink, tuple(companions))
        return self

    @property
    def peer_id(self) -> str:
        return self.network.status().peer_id

    async def stop(self) -> None:
        await self.network.stop()

    async def dial(self, address: str) -> None:
        async def connect(host: Any, pubsub: Any) -> None:
            import multiaddr
            from libp2p.peer.peerinfo import info_from_p2p_addr

            await host.connect(info_from_p2p_addr(multiaddr.Multiaddr(address)))

        await self.network.in_trio(connect)

    async def hang_up(self, peer: str) -> None:
        async def disconnect(host: Any, pubsub: Any) -> None:
            from libp2p.peer.id import ID

            await host.disconnect(ID.from_base58(peer))

        await self.network.in_trio(disconnect)

    def publish(self, topic: str, payload: bytes) -> None:
        """A message signed by this peer, as gossipsub sends it (any topic: the victim subscribes to four)."""
        self.network.publish(topic, payload)  # type: ignore[arg-type]

    async def send_all(self, victim: str, items: Sequence[tuple[str, bytes]], per_s: float = 400.0) -> None:
        """Publishes ``items`` (topic, payload) as :meth:`publish` does, at most ``per_s`` a second and never
        faster than this peer's pubsub hands them to ``victim`` (its outbound queue drops what does not fit)."""
        async def send(host: Any, pubsub: Any) -> None:
            import trio
            from libp2p.peer.id import ID

            target = ID.from_base58(victim)
            for topic, payload in items:
                while len(pubsub.peer_queues.get(target, ())) > 8:  # noqa: ASYNC110 (no event for it)
                    await trio.sleep(0.002)
                await pubsub.publish(topic, payload)
                await trio.sleep(1 / per_s)

        await self.network.in_trio(send)

    async def answer_metadata(self, answer: Callable[[], bytes]) -> None:
        """From now on this peer answers a metadata request (both protocols) with ``answer()``; an answer of
        ``b"<never>"`` holds the stream open without a word."""
        from app.network.metadata import COMPANIONS_PROTOCOL, METADATA_PROTOCOL

        async def install(host: Any, pubsub: Any) -> None:
            import trio

            async def handler(stream: Any) -> None:
                payload = answer()
                try:
                    if payload == b"<never>":
                        await trio.sleep(3600)
                    await stream.write(payload)
                finally:
                    with contextlib.suppress(Exception):
                        await stream.close()

            host.set_stream_handler(COMPANIONS_PROTOCOL, handler)
            host.set_stream_handler(METADATA_PROTOCOL, handler)

        await self.network.in_trio(install)

    async def hold_streams(self, victim: str, count: int, protocol: str = "/meshsub/1.1.0") -> int:
        """Opens ``count`` streams to ``victim`` and keeps them open (until this peer stops); returns how many
        the victim accepted (the others it reset at once)."""
        async def hold(host: Any, pubsub: Any) -> int:
            import trio
            from libp2p.peer.id import ID

            streams = []
            for _ in range(count):
                with contextlib.suppress(Exception):
                    streams.append(await host.new_stream(ID.from_base58(victim), [protocol]))
            await trio.sleep(1)  # the victim's resets arrive
            alive = 0
            for stream in streams:
                try:
                    await stream.write(b"")  # nothing: a reset stream refuses even that
                    alive += 1
                except Exception:
                    continue
            self._held = streams
            return alive

        return await self.network.in_trio(hold)

    async def raw(self, victim: str, chunks: list[bytes], protocol: str = "/meshsub/1.1.0") -> None:
        """Opens a new stream to ``victim`` on ``protocol`` and writes ``chunks`` as they are, then closes it."""
        async def write(host: Any, pubsub: Any) -> None:
            import trio
            from libp2p.peer.id import ID

            with trio.move_on_after(5):
                stream = await host.new_stream(ID.from_base58(victim), [protocol])
                try:
                    for chunk in chunks:
                        await stream.write(chunk)
                finally:
                    with contextlib.suppress(Exception):
                        await stream.close()

        await self.network.in_trio(write)

    async def own_key(self) -> Any:
        """This peer's own key pair (what it signs with: its messages are its own, however many)."""
        from libp2p.crypto.keys import KeyPair

        async def read(host: Any, pubsub: Any) -> Any:
            return KeyPair(host.get_private_key(), host.get_public_key())

        return await self.network.in_trio(read)

    def batch(self, topic: str, payloads: Sequence[bytes], key: Any) -> bytes:
        """One RPC publishing every one of ``payloads`` on ``topic``, signed by ``key`` (a flood in one write)."""
        return _prefixed([self.message(topic, payload, key=key) for payload in payloads])

    def signed(self, topic: str, data: bytes, *, key: Any = None, claim: str | None = None,
               with_key: bytes | None = None, sign: bool = True) -> bytes:
        """One RPC publishing ``data`` on ``topic`` (varint-prefixed, as on the stream): see :meth:`message`."""
        return _prefixed([self.message(topic, data, key=key, claim=claim, with_key=with_key, sign=sign)])

    def message(self, topic: str, data: bytes, *, key: Any = None, claim: str | None = None,
                with_key: bytes | None = None, sign: bool = True) -> Any:
        """A pubsub message of ``data`` on ``topic`` signed by ``key`` (a fresh key pair when None: a new signer);
        ``claim`` puts another peer's id in ``from`` (a forged signer), ``with_key`` a public key beside it."""
        from libp2p.crypto.secp256k1 import create_new_key_pair
        from libp2p.peer.id import ID
        from libp2p.pubsub.pb import rpc_pb2

        pair = key or create_new_key_pair()
        from_id = ID.from_base58(claim).to_bytes() if claim else ID.from_pubkey(pair.public_key).to_bytes()
        self._seq += 1
        message = rpc_pb2.Message(data=data, topicIDs=[topic], from_id=from_id, seqno=self._seq.to_bytes(8, "big"))
        if sign:
            message.signature = pair.private_key.sign(b"libp2p-pubsub:" + message.SerializeToString())
        if with_key is not None:
            message.key = with_key
        return message


def _prefixed(messages: list[Any]) -> bytes:
    from libp2p.pubsub.pb import rpc_pb2
    from libp2p.utils.varint import encode_uvarint

    rpc = rpc_pb2.RPC(publish=messages).SerializeToString()
    return encode_uvarint(len(rpc)) + rpc


# -- hostile payloads: every one must be refused by the victim's link -------------------------------------------------

@dataclass(frozen=True)
class Hostile:
    """One payload a hostile peer publishes: ``family`` is what it tries (the fuzz counts by it)."""

    family: str
    topic: str
    payload: bytes


FAMILIES: Final = ("garbage", "truncated", "not an item", "deep", "oversized", "bad text", "constants", "mutated",
                   "forged from", "forged vote", "act as another", "query", "too many votes")


def hostile_payloads(rng: random.Random, count: int, *, local: Sequence[str], user: str, taken: Sequence[str],
                     victim: str) -> list[Hostile]:
    """``count`` payloads of every family in turn, each one refused by a victim whose companions are ``local``,
    whose user is ``user`` and whose peer id is ``victim``; ``taken`` are companions another peer announced there.
    None of them is a valid item a peer may send, so none may reach the victim's bus."""
    return [_hostile(rng, FAMILIES[i % len(FAMILIES)], local=local, user=user, taken=taken, victim=victim)
            for i in range(count)]


def _valid(rng: random.Random, sender: str) -> tuple[str, dict[str, Any]]:
    from companions.wire.protocol import Action, Message, State, to_wire

    return rng.choice([
        ("messages", to_wire(Message.create(from_=sender, message="hello", to=["akari"], emotion="happy"))),
        ("states", to_wire(State.create(from_=sender, message_id="m1", state="speak", importance=5))),
        ("actions", to_wire(Action.create(from_=sender, name="wave", params={"hand": "left"}))),
    ])


def _junk(rng: random.Random) -> Any:
    return rng.choice([None, True, 0, -1, 1.5, "", "x" * rng.randint(1, 40), [], {}, [1, "a"], {"a": {"b": []}}])


def _nested(rng: random.Random, depth: int) -> str:
    if rng.random() < 0.5:
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def _hostile(rng: random.Random, family: str, *, local: Sequence[str], user: str, taken: Sequence[str],
             victim: str) -> Hostile:
    from companions.wire.protocol import Query, QueryResult, State, to_wire

    topic, body = _valid(rng, "companion_evil")
    text = json.dumps(body)
    payload: bytes
    if family == "garbage":
        payload = bytes(rng.randrange(256) for _ in range(rng.randint(1, 200)))
        payload = b"\xff" + payload  # never valid UTF-8 JSON
    elif family == "truncated":
        payload = text[: rng.randrange(1, len(text) - 1)].encode()
    elif family == "not an item":
        value = _junk(rng)
        payload = json.dumps([value] if topic == "states" and rng.random() < 0.5 else value).encode()
    elif family == "deep":
        depth = rng.choice([17, 40, 300, 1000, 5000, 20000])
        if rng.random() < 0.5:
            payload = _nested(rng, depth).encode()
        else:  # a valid item whose open parts (an action's params, a message's metadata) nest deep
            inner = _nested(rng, depth)
            payload = (f'{{"jsonrpc":"2.0","method":"action.send","params":{{"from":"companion_evil",'
                       f'"name":"wave","params":{{"x":{inner}}}}}}}').encode()
            topic = "actions"
    elif family == "oversized":
        body["params"]["pad"] = "z" * rng.randint(64 * 1024, 200 * 1024)
        payload = json.dumps(body).encode()
    elif family == "bad text":
        where = rng.choice(['{"k":"\\ud800"}', '{"\\udfff":1}', '{"k":["a","\\ud83d"]}'])
        payload = (f'{{"jsonrpc":"2.0","method":"action.send","params":{{"from":"companion_evil","name":"wave",'
                   f'"params":{where}}}}}').encode()
        topic = "actions"
    elif family == "constants":
        value = rng.choice(["NaN", "Infinity", "-Infinity", "1" * 5000])
        payload = text.replace('"hello"', value).replace('"left"', value).replace("5", value, 1).encode()
        if payload == text.encode():
            payload = f"[{value}]".encode()
    elif family == "mutated":
        payload = json.dumps(_mutate(rng, topic, body)).encode()
    elif family == "forged from":  # as this app's companions, another peer's, or a person's form
        sender = rng.choice([*local, *taken, f"{user}@{victim}", "someone@elsewhere"])
        topic, body = _valid(rng, sender)
        payload = json.dumps([body] if topic == "states" else body).encode()
    elif family == "forged vote":  # a person never votes; nor may anyone as this app's user or companions
        sender = rng.choice([user, "user", "user_evil", *local, *taken, f"{user}@{victim}"])
        vote = State.create(from_=sender, message_id=f"m{rng.randrange(99)}", state="speak", importance=10)
        topic, payload = "states", json.dumps([to_wire(vote)]).encode()
    elif family == "act as another":  # actions come from a peer's own companions only
        sender = rng.choice([user, "user_evil", "nobody_announced", *local, *taken])
        payload = json.dumps({"jsonrpc": "2.0", "method": "action.send",
                              "params": {"from": sender, "name": "wave", "params": {}}}).encode()
        topic = "actions"
    elif family == "query":
        item = rng.choice([Query.create(from_=rng.choice([*local, "companion_evil", user]), type="vision"),
                           QueryResult.ok(f"q{rng.randrange(1000)}", {"image": "data:image/png;base64,AAAA"})])
        topic, payload = "queries", json.dumps(to_wire(item)).encode()
    else:  # "too many votes": more than a payload may hold, none of them valid
        payload = json.dumps([{"jsonrpc": "2.0", "method": "state.send", "params": {"from": "x"}}] *
                             rng.randint(33, 500)).encode()
        topic = "states"
    return Hostile(family, topic, payload)


def _mutate(rng: random.Random, topic: str, body: dict[str, Any]) -> Any:
    """Breaks a valid item in a way no reading of it can accept."""
    body = json.loads(json.dumps(body))
    params = body["params"]
    kind = rng.randrange(7)
    if kind == 0:
        params[rng.choice(["x", "admin", "__class__", "signature"])] = _junk(rng)  # unknown fields are refused
    elif kind == 1:
        params.pop("from")
    elif kind == 2:
        params["from"] = rng.choice(["", 3, None, ["user"], "x" * 300])
    elif kind == 3:
        body["jsonrpc"] = rng.choice(["1.0", "2", None, 2.0])
    elif kind == 4:
        body["method"] = rng.choice(["message.sent", "", None, "__class__", "query.send"])
    elif kind == 5:
        if topic == "messages":
            params[rng.choice(["to", "message", "id"])] = rng.choice([11, -1, {"a": 1}, ["x"] * 65, None])
        elif topic == "states":
            params[rng.choice(["importance", "state", "closing", "selected"])] = rng.choice([11, -1, "loud", None])
        else:
            params[rng.choice(["name", "params"])] = rng.choice([None, 5, ["x"], ""])
    else:
        body = {"jsonrpc": "2.0", "id": _junk(rng), "result": _junk(rng)}  # a result that is one on no topic
    return [body] if topic == "states" and rng.random() < 0.5 else body
