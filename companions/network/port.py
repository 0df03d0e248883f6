"""The network port: how the core reaches companions on other machines (the reference's peer-to-peer network).

The core never names a transport. A :class:`NetworkPort` adapter (app/network: py-libp2p in its own thread) carries
raw payloads on the reference's topics and tells a :class:`NetworkSink` what arrived, from which peer (the signer of
a gossipsub message: strict signing), which companions a peer announced (``/aikyo/metadata/1.0.0``) and when a peer
went away; this process's companions change while it runs (:meth:`NetworkPort.announce`). Everything a sink is
told arrives on the asyncio loop; everything it is told is untrusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from companions.wire.protocol import CompanionMetadata, Topic

MAX_PAYLOAD_BYTES: Final = 64 * 1024  # a message larger than this is dropped before it is parsed


class NetworkError(RuntimeError):
    """The network could not start (a bad listen address, a port in use, the library missing)."""


class NetworkSink(Protocol):
    """What the adapter calls, always on the asyncio loop."""

    def received(self, peer: str, topic: str, payload: bytes) -> None:
        """A pubsub message signed by ``peer`` arrived on ``topic``."""

    def announced(self, peer: str, companions: tuple[CompanionMetadata, ...]) -> None:
        """``peer`` announced the companions it runs (its metadata): all of them, now (again when they changed)."""

    def gone(self, peer: str) -> None:
        """The last connection to ``peer`` closed."""

    def connected(self, peer: str) -> None:
        """A connection to ``peer`` opened: what this process publishes reaches it from now on."""


@dataclass(frozen=True)
class NetworkStatus:
    """What the window shows about the network: where this process listens and why it does not."""

    running: bool
    peer_id: str = ""
    addresses: tuple[str, ...] = ()
    problem: str = ""


class NetworkPort(Protocol):
    """A peer-to-peer transport. ``publish`` never blocks and is safe from the loop thread."""

    async def start(self, sink: NetworkSink, local: tuple[CompanionMetadata, ...]) -> NetworkStatus:
        """Joins the network and announces ``local``; raises :class:`NetworkError` when it cannot."""
        ...

    def publish(self, topic: Topic, payload: bytes) -> None:
        """Sends ``payload`` on ``topic`` to every peer (signed by this process's key)."""
        ...

    def announce(self, local: tuple[CompanionMetadata, ...]) -> None:
        """This process runs ``local`` now (its cast changed): served to every peer that asks from now on, and
        the peers connected already are told where the protocol lets them hear it. Never blocks."""
        ...

    def status(self) -> NetworkStatus: ...

    async def stop(self) -> None:
        """Leaves the network; bounded; idempotent."""
        ...
