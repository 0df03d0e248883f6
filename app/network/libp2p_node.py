"""The :class:`~companions.network.port.NetworkPort` adapter: py-libp2p in its own thread with its own trio loop.

The stack is the reference framework's (aikyo's companion server): TCP, Noise, Yamux, identify, GossipSub
(/meshsub/1.2.0, 1.1.0, 1.0.0) with strict signing, mDNS where asked, and the ``/aikyo/metadata/1.0.0`` stream:
the answering side writes its metadata as one raw JSON chunk and closes. The reference runs one companion per peer,
so it reads one metadata object; Madoi runs several companions per process and answers that protocol with its first
companion, and ``/madoi/companions/1.0.0`` (the same stream, a JSON array) with all of them.

The cast changes while Madoi runs (:meth:`Libp2pNetwork.announce`): what both streams serve follows at once, and each
connected peer gets an empty ``/madoi/companions-changed/1.0.0`` stream; a Madoi peer asks again (at most once per
REASK_INTERVAL_S: later notices wait and are taken together), a reference node speaks no such protocol and keeps
what it read first (it asks each peer once and answers nobody twice), until it connects anew.

Threads: the trio thread owns the host; the asyncio loop hands it work through a trio memory channel
(``trio.lowlevel.current_trio_token().run_sync_soon``) and gets results back with ``call_soon_threadsafe``. Nothing
here blocks the asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from app.network.addresses import dialable
from app.network.metadata import CHANGED_PROTOCOL, COMPANIONS_PROTOCOL, METADATA_PROTOCOL, parse_metadata, read_all
from companions.network.port import MAX_PAYLOAD_BYTES, NetworkError, NetworkSink, NetworkStatus
from companions.network.untrusted import Drops, Refused
from companions.wire.protocol import CompanionMetadata, Topic, to_wire

log = logging.getLogger(__name__)
T = TypeVar("T")

TOPICS: Final = ("messages", "states", "queries", "actions")
START_TIMEOUT_S: Final = 20.0
STOP_TIMEOUT_S: Final = 1.0  # within the runtime's bound per component (zeroconf may block longer: a daemon thread)
METADATA_TIMEOUT_S: Final = 10.0
METADATA_WAIT_S: Final = 3.0  # a reference node's request waits at most this long for ours (see _serve)
MDNS_DIAL_INTERVAL_S: Final = 2.0
MDNS_DIALS_PER_ROUND: Final = 8  # a flood of mDNS answers must not make every round dial hundreds of addresses
MDNS_RETRY_S: Final = 30.0  # a discovered peer that could not be reached is dialed again after this
METADATA_REQUESTS_PER_PEER: Final = 2  # a peer's metadata requests answered at once; more are reset
REASK_INTERVAL_S: Final = 1.0  # a peer that says its companions changed is asked again at most this often
# py-libp2p's spam limit defaults to 10 messages/s per peer and topic: a turn's states and a streamed line exceed it.
MESSAGES_PER_TOPIC_PER_S: Final = 200.0


@dataclass(frozen=True)
class Libp2pConfig:
    listen: str = "/ip4/0.0.0.0/tcp/0"
    peers: tuple[str, ...] = ()
    mdns: bool = True


class Libp2pNetwork:
    """One libp2p host for this process; its peer id signs everything this process publishes."""

    def __init__(self, config: Libp2pConfig) -> None:
        self.config = config
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sink: NetworkSink | None = None
        self._trio_token: Any = None
        self._send: Any = None  # trio.MemorySendChannel of (topic, payload) / ("dial", addr)
        self._stopping: Any = None  # trio.Event
        self._status = NetworkStatus(running=False)
        self._metadata: tuple[CompanionMetadata, ...] = ()
        self._started: asyncio.Future[NetworkStatus] | None = None
        self._fetches: dict[Any, Any] = {}  # peer ID -> trio.Event: our metadata request to it ended
        self._nursery: Any = None
        self._host: Any = None
        self._pubsub: Any = None
        self._serving: dict[Any, int] = {}  # peer ID -> its metadata requests being answered
        self._reasking: dict[Any, bool] = {}  # peer ID -> asked again now; whether it said "changed" since
        self.drops = Drops(log)  # what the libp2p layer refused (the link counts what it refuses itself)

    # -- the asyncio side ----------------------------------------------------------------------------------
    async def start(self, sink: NetworkSink, local: tuple[CompanionMetadata, ...]) -> NetworkStatus:
        if self._thread is not None:
            return self._status
        try:
            import libp2p  # noqa: F401  (fails early, with a reason a user can act on)
            import trio  # noqa: F401
        except ImportError as err:
            raise NetworkError(f"the libp2p package is not installed ({err})") from None
        self._loop = asyncio.get_running_loop()
        self._sink, self._metadata = sink, local
        self._started = self._loop.create_future()
        self._thread = threading.Thread(target=self._thread_main, name="libp2p", daemon=True)
        self._thread.start()
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                self._status = await asyncio.shield(self._started)
        except TimeoutError:
            await self.stop()
            raise NetworkError(f"the network did not start within {START_TIMEOUT_S:g} s") from None
        except NetworkError:
            self._thread.join(timeout=STOP_TIMEOUT_S)
            self._thread = None
            raise
        return self._status

    def publish(self, topic: Topic, payload: bytes) -> None:
        self._to_trio((topic, payload))

    def dial(self, address: str) -> None:
        self._to_trio(("dial", address.encode()))

    def announce(self, local: tuple[CompanionMetadata, ...]) -> None:
        self._metadata = tuple(local)  # read by the stream handlers in the libp2p thread: one reference, swapped
        self._to_trio(("announce", b""))

    def status(self) -> NetworkStatus:
        return self._status

    async def topic_peers(self, topic: str) -> tuple[str, ...]:
        """The peers known to be subscribed to ``topic`` (what a publish reaches now)."""

        async def read(host: Any, pubsub: Any) -> tuple[str, ...]:
            return tuple(sorted(p.to_string() for p in pubsub.peer_topics.get(topic, ())))

        return await self.in_trio(read) if self._pubsub is not None else ()

    async def in_trio(self, work: Callable[[Any, Any], Awaitable[T]]) -> T:
        """Runs ``work(host, pubsub)`` in the libp2p thread and returns its result (tools and tests: what a peer
        sees, or a hostile peer's raw streams). Raises :class:`NetworkError` when the node is not running."""
        loop, token, nursery = asyncio.get_running_loop(), self._trio_token, self._nursery
        if token is None or nursery is None:
            raise NetworkError("the network is not running")
        answer: asyncio.Future[T] = loop.create_future()

        def settle(outcome: T | BaseException) -> None:
            if answer.done():
                return
            if isinstance(outcome, BaseException):
                answer.set_exception(outcome)
            else:
                answer.set_result(outcome)

        async def run() -> None:
            try:
                outcome: T | BaseException = await work(self._host, self._pubsub)
            except Exception as err:
                outcome = err
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(settle, outcome)

        try:
            token.run_sync_soon(nursery.start_soon, run)
        except RuntimeError:  # the trio loop has ended
            raise NetworkError("the network is not running") from None
        return await answer

    async def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        token, stopping = self._trio_token, self._stopping
        if token is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the trio loop already ended
                token.run_sync_soon(stopping.set)
        await asyncio.get_running_loop().run_in_executor(None, thread.join, STOP_TIMEOUT_S)
        if thread.is_alive():
            log.warning("the libp2p thread did not stop within %.1f s (it is a daemon thread)", STOP_TIMEOUT_S)
        self._status = NetworkStatus(running=False)

    def _to_trio(self, item: tuple[str, bytes]) -> None:
        token, send = self._trio_token, self._send
        if token is None or send is None:
            return
        with contextlib.suppress(RuntimeError):  # the trio loop has ended: the network is down, the item is dropped
            token.run_sync_soon(self._enqueue, send, item)

    @staticmethod
    def _enqueue(send: Any, item: tuple[str, bytes]) -> None:
        import trio

        try:
            send.send_nowait(item)
        except trio.WouldBlock:
            log.warning("network: the outgoing queue is full; dropping a %s item", item[0])
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    def _call_sink(self, method: str, *args: Any) -> None:
        loop, sink = self._loop, self._sink
        if loop is None or sink is None or loop.is_closed():
            return
        handler = getattr(sink, method, None)  # a sink may not want to be told everything (connected)
        if handler is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(handler, *args)

    def _resolve_start(self, outcome: NetworkStatus | BaseException) -> None:
        loop, future = self._loop, self._started
        if loop is None or future is None or loop.is_closed():
            return

        def settle() -> None:
            if future.done():
                return
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

        loop.call_soon_threadsafe(settle)

    # -- the trio side -------------------------------------------------------------------------------------
    def _thread_main(self) -> None:
        import trio

        try:
            trio.run(self._main)
        except BaseException as err:  # anything that ends the thread must reach the loop
            if isinstance(err, NetworkError):
                problem = str(err)
                log.error("network: %s", problem)
            else:
                problem = f"{type(err).__name__}: {err}"
                log.exception("the libp2p thread failed")
            self._resolve_start(NetworkError(problem))
            self._status = NetworkStatus(running=False, problem=problem)
            return
        self._resolve_start(NetworkError("the network stopped before it started"))

    async def _main(self) -> None:
        import multiaddr  # type: ignore[import-untyped]
        import trio
        from libp2p import new_host
        from libp2p.crypto.secp256k1 import create_new_key_pair
        from libp2p.pubsub.gossipsub import PROTOCOL_ID, PROTOCOL_ID_V11, PROTOCOL_ID_V12, GossipSub
        from libp2p.tools.anyio_service import background_trio_service

        from app.network.hardening import GuardedPubsub, guard_pubsub, guard_streams

        self._trio_token = trio.lowlevel.current_trio_token()
        self._stopping = trio.Event()
        send, receive = trio.open_memory_channel[tuple[str, bytes]](4096)
        self._send = send
        try:
            listen = multiaddr.Multiaddr(self.config.listen)
        except Exception as err:
            raise NetworkError(f"bad listen address {self.config.listen!r}: {err}") from None
        host = new_host(key_pair=create_new_key_pair(), listen_addrs=[listen], enable_mDNS=self.config.mdns)
        router = GossipSub(protocols=[PROTOCOL_ID_V12, PROTOCOL_ID_V11, PROTOCOL_ID], degree=6, degree_low=4,
                           degree_high=12, heartbeat_interval=1,
                           max_messages_per_topic_per_second=MESSAGES_PER_TOPIC_PER_S)
        guard_streams(host, self.drops)
        pubsub = guard_pubsub(GuardedPubsub(host, router, strict_signing=True,
                                            max_inbound_rpc_size=4 * MAX_PAYLOAD_BYTES), self.drops)
        host.set_stream_handler(METADATA_PROTOCOL,  # type: ignore[arg-type]
                                self._serve(self._first_metadata, ours_first=True))
        host.set_stream_handler(COMPANIONS_PROTOCOL,  # type: ignore[arg-type]
                                self._serve(self._all_metadata, ours_first=False))
        host.set_stream_handler(CHANGED_PROTOCOL, self._heard_change)  # type: ignore[arg-type]
        async with host.run(listen_addrs=[listen]), background_trio_service(pubsub), \
                background_trio_service(router), trio.open_nursery() as nursery:
            await pubsub.wait_until_ready()
            for topic in TOPICS:
                nursery.start_soon(self._deliver_topic, await pubsub.subscribe(topic), topic, host)
            self._nursery, self._host, self._pubsub = nursery, host, pubsub
            watcher = _PeerWatcher(self)
            host.get_network().register_notifee(watcher)  # type: ignore[arg-type]
            nursery.start_soon(self._outgoing, receive, pubsub, host, nursery)
            for address in self.config.peers:
                nursery.start_soon(self._dial, host, address)
            if self.config.mdns:
                nursery.start_soon(self._dial_discovered, host)
            peer_id = host.get_id().to_string()
            addresses = dialable(tuple(f"{a}" for a in host.get_addrs()))
            self._status = NetworkStatus(running=True, peer_id=peer_id, addresses=addresses)
            log.info("network: listening as %s on %s", peer_id, ", ".join(addresses))
            self._resolve_start(self._status)
            await self._stopping.wait()
            # The peers must see the connections end (their companions are then unreachable at once): leaving
            # host.run() stops listening but leaves the open connections to the garbage collector.
            with trio.move_on_after(STOP_TIMEOUT_S / 2):
                await host.close()
            nursery.cancel_scope.cancel()
        self._trio_token = None
        self._nursery = self._host = self._pubsub = None
        self._fetches.clear()
        self._reasking.clear()

    def _first_metadata(self) -> bytes:
        return json.dumps(to_wire(self._metadata[0]), ensure_ascii=False).encode() if self._metadata else b"{}"

    def _all_metadata(self) -> bytes:
        return json.dumps([to_wire(m) for m in self._metadata], ensure_ascii=False).encode()

    def _serve(self, payload: Callable[[], bytes], *, ours_first: bool) -> Callable[[Any], Any]:
        async def handler(stream: Any) -> None:
            # A reference node answers nothing to a peer whose metadata it already has, so the first of two peers
            # to read the other's would never learn it: a reference node's request (on its protocol) is answered
            # once this side's own request to it is done. Madoi peers ask on theirs and always answer.
            import trio

            peer = stream.muxed_conn.peer_id
            if self._serving.get(peer, 0) >= METADATA_REQUESTS_PER_PEER:
                self.drops.drop("flood", str(peer), "metadata request", "more requests at once than are answered")
                await stream.reset()
                return
            self._serving[peer] = self._serving.get(peer, 0) + 1
            try:
                if ours_first:
                    with trio.move_on_after(METADATA_WAIT_S):
                        await self._fetched(peer).wait()
                with trio.move_on_after(METADATA_TIMEOUT_S):  # a peer that never reads holds no task for long
                    await stream.write(payload())
            finally:
                left = self._serving.get(peer, 1) - 1
                if left > 0:
                    self._serving[peer] = left
                else:
                    self._serving.pop(peer, None)
                with contextlib.suppress(Exception):  # the peer reset it already
                    await stream.close()

        return handler

    def _fetched(self, peer: Any) -> Any:
        """The event set once this side's metadata request to ``peer`` ended (started here if not yet)."""
        import trio

        event = self._fetches.get(peer)
        if event is None:
            event = self._fetches[peer] = trio.Event()
            self._nursery.start_soon(self.fetch_metadata, self._host, peer, event)
        return event

    async def _deliver_topic(self, subscription: Any, topic: str, host: Any) -> None:
        from libp2p.peer.id import ID

        own = host.get_id()
        connections = host.get_network().connections
        async for message in subscription:
            try:
                peer = ID(message.from_id)
                if peer == own:
                    continue
                signer = peer.to_string()
            except Exception as err:
                self.drops.drop("transport", "?", topic, f"an unreadable signer: {type(err).__name__}: {err}")
                continue
            if peer not in connections:
                # Gossipsub relays what other peers signed, and anyone can sign with a key made a moment ago: a
                # signer this node is not connected to could be any number of peers. Every node of a Madoi circle
                # connects to every other (mDNS, or the addresses given), so only they are heard.
                self.drops.drop("stranger", signer, topic, "signed by a peer this node is not connected to")
                continue
            if len(message.data) > MAX_PAYLOAD_BYTES:
                self.drops.drop("oversized", signer, topic, f"{len(message.data)} bytes (limit {MAX_PAYLOAD_BYTES})")
                continue
            self._call_sink("received", signer, topic, bytes(message.data))

    async def _outgoing(self, receive: Any, pubsub: Any, host: Any, nursery: Any) -> None:
        async for kind, payload in receive:
            try:
                if kind == "dial":
                    nursery.start_soon(self._dial, host, payload.decode())
                elif kind == "announce":
                    for peer in host.get_connected_peers():
                        nursery.start_soon(self._tell_changed, host, peer)
                else:
                    await pubsub.publish(kind, payload)
            except Exception as err:
                log.warning("network: could not send on %s: %s", kind, err)

    async def _dial(self, host: Any, address: str) -> None:
        import multiaddr
        from libp2p.peer.peerinfo import info_from_p2p_addr

        try:
            await host.connect(info_from_p2p_addr(multiaddr.Multiaddr(address)))
        except Exception as err:
            log.warning("network: could not reach %s: %s", address, err)

    async def _dial_discovered(self, host: Any) -> None:
        """mDNS puts the peers it finds into the peer store; this dials the ones not connected."""
        import trio
        from libp2p.peer.peerinfo import PeerInfo

        failed: dict[Any, float] = {}  # peer -> when dialing it last failed (it waits MDNS_RETRY_S)
        while True:
            await trio.sleep(MDNS_DIAL_INTERVAL_S)
            now = trio.current_time()
            connected = set(host.get_connected_peers()) | {host.get_id()}
            store = host.get_peerstore()
            due = [p for p in store.peers_with_addrs()
                   if p not in connected and (p not in failed or now - failed[p] >= MDNS_RETRY_S)]
            for peer in due[:MDNS_DIALS_PER_ROUND]:
                try:
                    await host.connect(PeerInfo(peer, store.addrs(peer)))
                    failed.pop(peer, None)
                except Exception as err:
                    failed[peer] = now
                    log.debug("network: mDNS peer %s not reachable: %s", peer, err)
            if len(failed) > 1024:
                failed = {p: t for p, t in failed.items() if now - t <= MDNS_RETRY_S}

    async def _tell_changed(self, host: Any, peer: Any) -> None:
        """Tells ``peer`` this node's companions changed (an empty stream); a peer that does not speak Madoi's
        protocol (a reference node) refuses the stream and keeps what it read."""
        import trio

        try:
            with trio.move_on_after(METADATA_TIMEOUT_S):
                stream = await host.new_stream(peer, [CHANGED_PROTOCOL])
                await stream.close()
        except Exception as err:
            log.debug("network: %s was not told the companions changed: %s", peer, err)

    async def _heard_change(self, stream: Any) -> None:
        """A peer says its companions changed: it is asked again, at once or (asked within REASK_INTERVAL_S)
        once that interval has passed, however many times it says so meanwhile."""
        peer = stream.muxed_conn.peer_id
        with contextlib.suppress(Exception):  # the peer reset it already
            await stream.close()
        if peer in self._reasking:
            self._reasking[peer] = True
            return
        if self._nursery is None:
            return  # stopping
        self._reasking[peer] = False
        self._nursery.start_soon(self._ask_again, peer)

    async def _ask_again(self, peer: Any) -> None:
        import trio

        try:
            while True:
                self._reasking[peer] = False
                await self.fetch_metadata(self._host, peer, trio.Event())
                await trio.sleep(REASK_INTERVAL_S)
                host = self._host
                if not self._reasking.get(peer) or host is None or peer not in host.get_connected_peers():
                    return
        finally:
            self._reasking.pop(peer, None)

    async def fetch_metadata(self, host: Any, peer: Any, done: Any) -> None:
        try:
            await self._fetch_metadata(host, peer)
        except Exception as err:  # nothing a peer answers may end the node's tasks
            self.drops.drop("transport", str(peer), "metadata", f"{type(err).__name__}: {err}")
        finally:
            done.set()

    async def _fetch_metadata(self, host: Any, peer: Any) -> None:
        """Asks a newly connected peer who it runs: Madoi's list where it speaks it, else the reference's one
        companion, negotiated in one stream. A reference node that already fetched ours sends nothing back (its
        handler skips peers it knows); the link then learns its companion from its signed messages."""
        import trio

        try:
            with trio.fail_after(METADATA_TIMEOUT_S):
                stream = await host.new_stream(peer, [COMPANIONS_PROTOCOL, METADATA_PROTOCOL])
                many = stream.get_protocol() == COMPANIONS_PROTOCOL
                raw = await read_all(stream)
        except trio.TooSlowError:
            self.drops.drop("slow", str(peer), "metadata", f"not sent within {METADATA_TIMEOUT_S:g} s")
            return
        except Exception as err:  # the peer speaks neither (a firehose)
            log.debug("network: no metadata from %s: %s", peer, err)
            return
        if not raw:
            log.info("network: %s sent no metadata (it knew this peer already)", peer)
            return
        try:
            companions = parse_metadata(raw, many)
        except Refused as refused:
            self.drops.drop(refused.kind, str(peer), "metadata", str(refused))
            return
        # Reported once the peer's subscriptions arrived too: a line published to it before would be lost.
        with trio.move_on_after(METADATA_TIMEOUT_S):
            while peer not in self._pubsub.peer_topics.get("messages", ()):  # noqa: ASYNC110 (no event for it)
                await trio.sleep(0.02)
        self._call_sink("announced", peer.to_string(), companions)


class _PeerWatcher:
    """A libp2p notifee: asks each new peer for its metadata, reports a peer gone once its last connection closed."""

    def __init__(self, network: Libp2pNetwork) -> None:
        self.network = network
        self.connections: dict[Any, int] = {}

    async def connected(self, network: Any, conn: Any) -> None:
        peer = conn.muxed_conn.peer_id
        self.connections[peer] = self.connections.get(peer, 0) + 1
        self.network._call_sink("connected", peer.to_string())  # what a publish may reach (a line kept private)
        asked = self.network._fetches.get(peer)
        if asked is not None and asked.is_set() and self.connections[peer] > 1:
            # A peer that hung up and dialed again at once: the new connection may be told before the old one's
            # end, which then never reports it gone; its companions (maybe others now) are asked for again.
            del self.network._fetches[peer]
        self.network._fetched(peer)

    async def disconnected(self, network: Any, conn: Any) -> None:
        peer = conn.muxed_conn.peer_id
        left = self.connections.get(peer, 1) - 1
        if left > 0:
            self.connections[peer] = left
            return
        self.connections.pop(peer, None)
        self.network._fetches.pop(peer, None)  # a peer that comes back is asked again
        self.network._call_sink("gone", peer.to_string())

    async def opened_stream(self, network: Any, stream: Any) -> None: ...

    async def closed_stream(self, network: Any, stream: Any) -> None: ...

    async def listen(self, network: Any, multiaddr: Any) -> None: ...

    async def listen_close(self, network: Any, multiaddr: Any) -> None: ...
