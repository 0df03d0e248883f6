"""Bus -> clients: each item in each client's dialect, serialised once per dialect, never waiting on a client.

Both methods are direct bus subscribers (called inside ``publish``), so they never block: a frame is written at
once or queued per client (client.py). A QueryResult goes only to the client that sent its query; a ``speak``
query of a companion whose client says its lines itself is answered for that client (answering.py).

A private line (one that holds what the camera saw, the user's files or past conversations:
companions/trust/outbound.py) goes to the user's own client, and to any other only as the user allowed that client
(remembered, or asked in the window while the line waits; refused: the client gets ``kept_notice`` instead). Its
streamed pieces and its speech go only where it already may: never the occasion of a question.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from app.bridge.answering import Answering
from app.bridge.bridge_guests import BridgeGuests
from app.bridge.client import ClientSession
from app.bridge.dialects import Dialect, encode
from app.bridge.senders import stranger_id
from app.bridge.streams import StreamFrames
from app.bridge.turn_frames import TurnFrames
from companions.common.tasks import TaskSet
from companions.companion.worker import TextStreamed, TurnEnded
from companions.trust.outbound import Outbound, PrivateWords, kept_notice
from companions.trust.policy import Capability, Relation, Source
from companions.trust.sources import BRIDGE_PLACE, bridge_stranger
from companions.wire.bus import BusItem, LocalEvent
from companions.wire.protocol import Message, Query, QueryResult, WireItem
from companions.wire.query_broker import QueryBroker

log = logging.getLogger(__name__)

_ORIGINS_CAP: Final = 10_000
_RECENT_QUERIES: Final = 256  # queries relayed lately: what a client's answer answers


class Relay:
    def __init__(self, clients: set[ClientSession], broker: QueryBroker, answering: Answering,
                 guests: BridgeGuests, *, private: tuple[PrivateWords, Outbound, TaskSet] | None = None) -> None:
        self._clients = clients  # the server's set of authenticated clients (shared, not copied)
        self._broker = broker
        self._answering = answering
        self._guests = guests
        self._origins: dict[str, ClientSession] = {}  # query id -> the client that sent it
        self._recent: dict[str, Query] = {}
        self._stream_frames = StreamFrames()
        self._turn_frames = TurnFrames()
        self._unwritable: set[str] = set()  # the kinds of items that could not be written out, logged once each
        # which items are private, who may have them, and the questions put to the user meanwhile
        self._words, self._outbound, self._asking = private or (PrivateWords(), Outbound(None), TaskSet("bridge"))

    def is_origin(self, query_id: str) -> bool:
        return query_id in self._origins

    def sent_by(self, query: Query, client: ClientSession) -> None:
        """``client`` published ``query``: its result goes back to it alone."""
        if len(self._origins) >= _ORIGINS_CAP:
            del self._origins[next(iter(self._origins))]
        self._origins[query.id] = client

    def recent_query(self, query_id: str) -> Query | None:
        return self._recent.get(query_id)

    def items(self, item: BusItem) -> None:
        self._guests.saw(item)
        if isinstance(item, QueryResult):
            origin = self._origins.pop(item.id, None)
            if origin is not None and origin in self._clients:
                frame = self._encoded(item, origin.dialect)
                if frame is not None:
                    origin.send_now_or_offer(frame)
            return
        if not self._clients or isinstance(item, LocalEvent):
            return
        if isinstance(item, Query):
            if len(self._recent) >= _RECENT_QUERIES:
                del self._recent[next(iter(self._recent))]
            self._recent[item.id] = item
        kinds, speaker = self._private(item)
        frames: dict[Dialect, bytes | None] = {}
        for client in list(self._clients):
            if kinds and not client.own and not self._may_have(client, item, kinds, speaker):
                continue
            if client.dialect not in frames:
                frames[client.dialect] = self._encoded(item, client.dialect)
            frame = frames[client.dialect]
            if frame is not None:
                client.send_now_or_offer(frame)
            if isinstance(item, Query) and (said := self._answering.speak_for(client, item)) is not None:
                # after publish returns: the broker arms a query's timers once its own publish is done
                asyncio.get_running_loop().call_soon(self._broker.submit_result, said, client.key)

    def _private(self, item: WireItem) -> tuple[frozenset[Capability], str]:
        """What ``item`` holds of the user's private things, and whose line it is."""
        if isinstance(item, Message):
            line = self._words.of_line(item.params.id)
            return (line.kinds, line.companion_id) if line is not None else (frozenset(), "")
        if isinstance(item, Query) and item.params.type == "speak" and isinstance(item.params.body, dict):
            text, line_id = item.params.body.get("message"), item.params.body.get("messageId")
            if isinstance(text, str):
                return self._words.of_speech(text, line_id if isinstance(line_id, str) else None), ""
        return frozenset(), ""

    def _may_have(self, client: ClientSession, item: WireItem, kinds: frozenset[Capability], speaker: str) -> bool:
        """Whether ``client`` (not the user's own) gets the private ``item`` now. A line the user was not asked about
        yet waits for the answer (then the line, or the notice that it was kept here)."""
        destination = destination_of(client)
        known = self._outbound.known(destination, kinds)
        if known is not None or not isinstance(item, Message):
            if known is False and isinstance(item, Message):
                self._send(client, kept_notice(item))
            return bool(known)
        asking = self._ask(client, destination, item, kinds, speaker)
        try:
            self._asking.spawn(asking, name=f"bridge-private:{client.key}")
        except RuntimeError:  # closing: kept here
            asking.close()
        return False

    async def _ask(self, client: ClientSession, destination: Source, item: Message, kinds: frozenset[Capability],
                   speaker: str) -> None:
        allowed = await self._outbound.may_send(destination, kinds, speaker)
        if client in self._clients:
            self._send(client, item if allowed else kept_notice(item))

    def _send(self, client: ClientSession, item: WireItem) -> None:
        frame = self._encoded(item, client.dialect)
        if frame is not None:
            client.send_now_or_offer(frame)

    def _encoded(self, item: WireItem, dialect: Dialect) -> bytes | None:
        """``encode``, or ``None`` and a log line (not a traceback) for an item that cannot be written out. The door
        refuses such frames from clients (frame_checks.py); this keeps an item from elsewhere from costing a
        traceback on every relay."""
        try:
            return encode(item, dialect)
        except (ValueError, RecursionError) as err:  # PydanticSerializationError and UnicodeError are ValueErrors
            kind = f"{type(item).__name__}: {type(err).__name__}"
            level = logging.DEBUG if kind in self._unwritable else logging.WARNING
            self._unwritable.add(kind)
            log.log(level, "bridge: a %s cannot be written out and is not relayed: %s", kind, str(err)[:200])
            return None

    def streams(self, item: BusItem) -> None:
        """Streamed text and turn phases (``events``) to Madoi's clients that asked for them; turn phases to every
        client that speaks for a companion too (it learns from them that it holds the floor)."""
        if isinstance(item, TextStreamed | TurnEnded):
            frame, wanted = self._stream_frames.frame(item), "stream"
        elif self._clients and any(c.turns for c in self._clients):
            frame, wanted = self._turn_frames.frame(item), "turns"
        else:
            return
        if frame is None:
            return
        kinds = self._words.of_turn(item.companion_id, item.turn_id) if isinstance(item, TextStreamed) else frozenset()
        for client in list(self._clients):
            if kinds and not client.own and not self._outbound.known(destination_of(client), kinds):
                continue  # a private piece goes only where its line already may (no question for a piece)
            if getattr(client, wanted) and (client.dialect is Dialect.MADOI or client.guest is not None):
                client.send_now_or_offer(frame)


def destination_of(client: ClientSession) -> Source:
    """Who a client that is not the user's own is to the trust policy, as a destination of private lines: a web page
    by its origin, a client that brought a companion as that guest, any other by its address."""
    if client.guest and not client.origin:
        return Source(client.guest, Relation.GUEST, client.guest, BRIDGE_PLACE)
    stranger = bridge_stranger(stranger_id(client.origin, client.address))  # as its words are known (senders.py)
    assert stranger is not None
    return stranger

