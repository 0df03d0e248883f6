"""py-libp2p, made to survive what a peer sends: no error from a peer's bytes may end the node's trio thread.

py-libp2p 0.8.1 runs each inbound stream's handler and each received pubsub message in tasks of its services; an
exception in any of them cancels the whole service, and with it the host. Found here: six bytes on a
``/meshsub/1.1.0`` stream (a length prefix and a broken protobuf) raise ``DecodeError`` in ``Pubsub.stream_handler``
and take the node down; a signed message whose public key does not parse raises in ``push_msg`` the same way.
The guards below catch every ``Exception`` at those two doors (trio's ``Cancelled`` is a ``BaseException`` and
passes), reset the stream of the peer that sent it, and count it (``transport``) with a bounded log line. A message
whose signature is missing or not its signer's is dropped by Pubsub silently; py-libp2p's own check is wrapped to
count it (``bad signature``) for the node whose task checks it (a context variable: several nodes may share the
process), without checking a signature twice (~0.2 ms each here). Two bounds py-libp2p lacks are added: the
inbound streams one peer may hold open (STREAMS_PER_PEER), and a topic's subscription queue large enough that one
peer's burst does not crowd out the others' messages (SUBSCRIPTION_QUEUE).
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final

from libp2p.pubsub.pubsub import Pubsub
from libp2p.pubsub.validators import signature_validator

from companions.network.untrusted import Drops

log = logging.getLogger(__name__)


class GuardedPubsub(Pubsub):
    """:class:`Pubsub` whose stream reader and message handler never let a peer's error out."""

    drops: Drops = Drops(log)  # replaced per node by guard_pubsub

    async def stream_handler(self, stream: Any) -> None:
        try:
            await super().stream_handler(stream)
        except Exception as err:
            peer = _peer_of(stream)
            self.drops.drop("transport", peer, "pubsub stream", f"{type(err).__name__}: {err}")
            await _reset(stream)
            try:
                self._handle_dead_peer(stream.muxed_conn.peer_id)
            except Exception:
                log.debug("network: could not forget the pubsub peer %s", peer, exc_info=True)

    async def push_msg(self, msg_forwarder: Any, msg: Any) -> None:
        token = _checking.set((self.drops, str(msg_forwarder)))  # this task's signature check counts for this node
        try:
            await super().push_msg(msg_forwarder, msg)
        except Exception as err:
            self.drops.drop("transport", str(msg_forwarder), "pubsub message", f"{type(err).__name__}: {err}")
        finally:
            _checking.reset(token)


_checking: ContextVar[tuple[Drops, str] | None] = ContextVar("madoi_signature_check", default=None)


def _counted_signature_validator(msg: Any) -> bool:
    """py-libp2p's signature check, counting what it refuses (Pubsub drops such a message without a word)."""
    valid = bool(signature_validator(msg))
    checking = _checking.get()
    if not valid and checking is not None:
        drops, forwarder = checking
        drops.drop("bad signature", forwarder, "pubsub message", "no signature, or not one its signer made")
    return valid


SUBSCRIPTION_QUEUE: Final = 256
"""Messages a topic's subscription holds before py-libp2p drops the next (its default is 32). A peer's RPC may
carry a hundred messages at once; with 32 places, one peer's burst made py-libp2p drop the other peers' messages
that came at the same moment (a vote lost in someone else's flood). The link's rate limits drop the flooding
peer's, per peer, once they are read."""


def guard_pubsub(pubsub: GuardedPubsub, drops: Drops) -> GuardedPubsub:
    from libp2p.pubsub import pubsub as module

    module.SUBSCRIPTION_CHANNEL_SIZE = max(module.SUBSCRIPTION_CHANNEL_SIZE, SUBSCRIPTION_QUEUE)  # read by subscribe
    # read by Pubsub.push_msg from its module at each call
    setattr(module, "signature_validator", _counted_signature_validator)  # noqa: B010 (not an exported name)
    pubsub.drops = drops
    return pubsub


STREAMS_PER_PEER: Final = 32
"""Inbound streams one peer may hold open at once (a peer uses a handful: pubsub, identify, ping, the metadata
requests). py-libp2p bounds streams only in all (10,000), so one peer could take every place and the streams of
all other peers would wait; a stream past this is reset at once."""


def guard_streams(host: Any, drops: Drops) -> None:
    """Every inbound stream's handler (identify, ping, pubsub, the metadata streams) runs inside a guard: an error
    resets that stream and is counted, instead of ending the connection's tasks and the host with them; a peer
    holding STREAMS_PER_PEER streams open gets its next one reset."""
    network = host.get_network()
    handle: Callable[[Any], Awaitable[None]] = network.common_stream_handler
    open_streams: collections.Counter[str] = collections.Counter()

    async def guarded(stream: Any) -> None:
        peer = _peer_of(stream)
        if open_streams[peer] >= STREAMS_PER_PEER:
            drops.drop("flood", peer, "stream", f"more than {STREAMS_PER_PEER} streams open at once")
            await _reset(stream)
            return
        open_streams[peer] += 1
        try:
            await handle(stream)
        except Exception as err:
            drops.drop("transport", peer, "stream", f"{type(err).__name__}: {err}")
            await _reset(stream)
        finally:
            open_streams[peer] -= 1
            if open_streams[peer] <= 0:
                del open_streams[peer]

    network.set_stream_handler(guarded)


def _peer_of(stream: Any) -> str:
    try:
        return str(stream.muxed_conn.peer_id)
    except Exception:
        return "?"


async def _reset(stream: Any) -> None:
    try:
        await stream.reset()
    except Exception:
        log.debug("network: resetting a stream failed", exc_info=True)
