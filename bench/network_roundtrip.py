"""Message delivery across two processes over the reference's network: Madoi's path versus a bare publish/echo of
the same library (py-libp2p gossipsub), measured in the same run on loopback.

Madoi: a companion's message published on process A's bus -> NetworkLink -> the libp2p thread -> gossipsub ->
process B's libp2p thread -> NetworkLink (JSON, schema, from check) -> B's bus -> B's companion answers with a
message -> back the same way -> A's bus. Baseline: two bare py-libp2p hosts (trio, strict signing, the same
gossipsub settings), one publishing the same JSON bytes and the other echoing them. Each round trip waits for the
previous one; blocks of each alternate so machine noise hits both alike. The baseline uses the reference's wire as
Madoi must: both hosts subscribe to the four topics and the echo goes back on ``messages`` (the library then hands
each host its own messages too, which costs it: an echo on a separate topic nobody publishes to measured ~2x faster
on the same run, so that is not the baseline for a peer of the reference's network). The third figure is the
floor of the thread design (asyncio -> trio thread -> asyncio, nothing else).

Run: ``.venv/bin/python bench/network_roundtrip.py [round_trips_per_block]``
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import _report  # noqa: F401  # puts the repository on sys.path
import trio.lowlevel
from _report import report

from app.network.libp2p_node import MESSAGES_PER_TOPIC_PER_S, TOPICS, Libp2pConfig, Libp2pNetwork
from companions.common.loop_health import percentile
from companions.network.link import NetworkLink
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message, to_json_bytes

BLOCKS = 3
LOOPBACK = "/ip4/127.0.0.1/tcp/0"
AKARI = CompanionMetadata(id="akari", name="akari")
SOUTA = CompanionMetadata(id="souta", name="souta")


# -- the bare library (trio) -------------------------------------------------------------------------------------
async def bare_host(listen: str = LOOPBACK):  # type: ignore[no-untyped-def]
    import multiaddr
    from libp2p import new_host
    from libp2p.crypto.secp256k1 import create_new_key_pair
    from libp2p.pubsub.gossipsub import PROTOCOL_ID, PROTOCOL_ID_V11, PROTOCOL_ID_V12, GossipSub
    from libp2p.pubsub.pubsub import Pubsub

    address = multiaddr.Multiaddr(listen)
    host = new_host(key_pair=create_new_key_pair(), listen_addrs=[address])
    router = GossipSub(protocols=[PROTOCOL_ID_V12, PROTOCOL_ID_V11, PROTOCOL_ID], degree=6, degree_low=4,
                       degree_high=12, heartbeat_interval=1, max_messages_per_topic_per_second=MESSAGES_PER_TOPIC_PER_S)
    return host, router, Pubsub(host, router, strict_signing=True), address


async def bare_echo() -> None:
    """Child: echoes every message on ``messages`` back on ``echo``."""
    import trio
    from libp2p.tools.anyio_service import background_trio_service

    host, router, pubsub, address = await bare_host()
    async with host.run(listen_addrs=[address]), background_trio_service(pubsub), background_trio_service(router):
        await pubsub.wait_until_ready()
        subscription = await pubsub.subscribe("messages")
        for topic in TOPICS[1:]:
            await pubsub.subscribe(topic)
        own = host.get_id().to_bytes()
        print(f"{host.get_addrs()[0]}", flush=True)
        async for message in subscription:
            if message.from_id != own:  # the library hands a host its own messages too
                await pubsub.publish("messages", message.data)
    await trio.lowlevel.checkpoint()


async def bare_client(address: str, count: int) -> list[float]:
    import multiaddr
    import trio
    from libp2p.peer.peerinfo import info_from_p2p_addr
    from libp2p.tools.anyio_service import background_trio_service

    host, router, pubsub, listen = await bare_host()
    payload = to_json_bytes(Message.create(from_="akari", message="星がきれいだね", to=["souta"]))
    times: list[float] = []
    async with host.run(listen_addrs=[listen]), background_trio_service(pubsub), background_trio_service(router):
        await pubsub.wait_until_ready()
        echo = await pubsub.subscribe("messages")
        for topic in TOPICS[1:]:
            await pubsub.subscribe(topic)
        own = host.get_id().to_bytes()
        peer = info_from_p2p_addr(multiaddr.Multiaddr(address))
        await host.connect(peer)
        while peer.peer_id not in pubsub.peer_topics.get("messages", ()):  # noqa: ASYNC110  (no event for it)
            await trio.sleep(0.01)
        await trio.sleep(1.0)  # both meshes formed
        for _ in range(count):
            started = time.perf_counter()
            await pubsub.publish("messages", payload)
            while (await echo.get()).from_id == own:
                pass
            times.append((time.perf_counter() - started) * 1e3)
    return times


# -- Madoi (asyncio, the bus and the link) -------------------------------------------------------------------------
async def madoi_echo() -> None:
    """Child: souta answers every message of akari with the same words."""
    bus = InProcessBus()

    def answer(message: Message) -> None:
        if message.params.from_ == "akari":
            bus.publish(Message.create(from_="souta", message=message.params.message, to=["akari"]))

    bus.subscribe("messages", answer, direct=True)
    link = NetworkLink(bus, Libp2pNetwork(Libp2pConfig(listen=LOOPBACK, mdns=False)), local=[SOUTA], user_id="user")
    await link.start()
    print(link.status.addresses[0], flush=True)
    await asyncio.Event().wait()


async def madoi_client(address: str, count: int) -> list[float]:
    bus = InProcessBus()
    answered: asyncio.Future[None] | None = None

    def heard(message: Message) -> None:
        if message.params.from_ == "souta" and answered is not None and not answered.done():
            answered.set_result(None)

    bus.subscribe("messages", heard, direct=True)
    network = Libp2pNetwork(Libp2pConfig(listen=LOOPBACK, peers=(address,), mdns=False))
    link = NetworkLink(bus, network, local=[AKARI], user_id="user")
    await link.start()
    async with asyncio.timeout(30):
        while "souta" not in link.remote:  # noqa: ASYNC110  (announced once its subscriptions arrived)
            await asyncio.sleep(0.01)
    await asyncio.sleep(1.0)  # both meshes formed
    times: list[float] = []
    for _ in range(count):
        answered = asyncio.get_running_loop().create_future()
        started = time.perf_counter()
        bus.publish(Message.create(from_="akari", message="星がきれいだね", to=["souta"]))
        await answered
        times.append((time.perf_counter() - started) * 1e3)
    await link.stop()
    return times


def thread_hops(count: int) -> list[float]:
    """The floor of any design that runs the library in its own thread: the asyncio loop hands a value to a trio
    thread and gets it back (two hops, as each process of the Madoi path does), no network, no library."""
    import threading

    import trio

    ready: list[trio.lowlevel.TrioToken] = []
    started = threading.Event()
    stop = threading.Event()

    async def trio_side() -> None:
        ready.append(trio.lowlevel.current_trio_token())
        started.set()
        while not stop.is_set():  # noqa: ASYNC110  (set from another thread)
            await trio.sleep(0.05)

    thread = threading.Thread(target=trio.run, args=(trio_side,), daemon=True)
    thread.start()
    started.wait()

    async def hops() -> list[float]:
        loop = asyncio.get_running_loop()
        times = []
        for _ in range(count):
            done = loop.create_future()
            begun = time.perf_counter()
            ready[0].run_sync_soon(loop.call_soon_threadsafe, done.set_result, None)
            await done
            times.append((time.perf_counter() - begun) * 1e3)
        return times

    try:
        return asyncio.run(hops())
    finally:
        stop.set()
        thread.join()


def child(mode: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, __file__, mode], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def main(count: int) -> None:
    import trio

    bare: list[float] = []
    madoi: list[float] = []
    hops: list[float] = []
    for _ in range(BLOCKS):
        hops += thread_hops(count)
        proc, address = child("--bare-echo")
        try:
            bare += trio.run(bare_client, address, count)
        finally:
            proc.terminate()
            proc.wait()
        proc, address = child("--madoi-echo")
        try:
            madoi += asyncio.run(madoi_client(address, count))
        finally:
            proc.terminate()
            proc.wait()
    report("network round trip p50 (Madoi: bus, link, libp2p thread, both ways)", percentile(madoi, 0.5), "ms",
           "bare py-libp2p publish/echo p50", percentile(bare, 0.5))
    report("network round trip p99", percentile(madoi, 0.99), "ms", "bare p99", percentile(bare, 0.99))
    report("asyncio -> trio thread -> asyncio hop p50 (no library; a Madoi round trip makes two per process)",
           percentile(hops, 0.5), "ms")
    print(json.dumps({"round_trips": len(madoi), "blocks": BLOCKS}))


if __name__ == "__main__":
    if sys.argv[1:] == ["--bare-echo"]:
        import trio

        trio.run(bare_echo)
    elif sys.argv[1:] == ["--madoi-echo"]:
        asyncio.run(madoi_echo())
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
