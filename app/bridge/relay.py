"""Bus -> clients: each item in each client's dialect, serialised once per dialect, never waiting on a client.

Both methods are direct bus subscribers (called inside ``publish``), so they never block: a frame is written at
once or queued per client (client.py). A QueryResult goes only to the client that sent its query; a ``speak``
query of a companion whose client says its lines itself is answered for that client (answering.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from app.bridge.answering import Answering
from app.bridge.bridge_guests import BridgeGuests
from app.bridge.client import ClientSession
from app.bridge.dialects import Dialect, encode
from app.bridge.streams import StreamFrames
from app.bridge.turn_frames import TurnFrames
from companions.companion.worker import TextStreamed, TurnEnded
from companions.wire.bus import BusItem, LocalEvent
from companions.wire.protocol import Query, QueryResult, WireItem
from companions.wire.query_broker import QueryBroker

log = logging.getLogger(__name__)

_ORIGINS_CAP: Final = 10_000
_RECENT_QUERIES: Final = 256  # queries relayed lately: what a client's answer answers


class Relay:
    def __init__(self, clients: set[ClientSession], broker: QueryBroker, answering: Answering,
                 guests: BridgeGuests) -> None:
        self._clients = clients  # the server's set of authenticated clients (shared, not copied)
        self._broker = broker
        self._answering = answering
        self._guests = guests
        self._origins: dict[str, ClientSession] = {}  # query id -> the client that sent it
        self._recent: dict[str, Query] = {}
        self._stream_frames = StreamFrames()
        self._turn_frames = TurnFrames()
        self._unwritable: set[str] = set()  # the kinds of items that could not be written out, logged once each

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
        frames: dict[Dialect, bytes | None] = {}
        for client in list(self._clients):
            if client.dialect not in frames:
                frames[client.dialect] = self._encoded(item, client.dialect)
            frame = frames[client.dialect]
            if frame is not None:
                client.send_now_or_offer(frame)
            if isinstance(item, Query) and (said := self._answering.speak_for(client, item)) is not None:
                # after publish returns: the broker arms a query's timers once its own publish is done
                asyncio.get_running_loop().call_soon(self._broker.submit_result, said, client.key)

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
        for client in list(self._clients):
            if getattr(client, wanted) and (client.dialect is Dialect.MADOI or client.guest is not None):
                client.send_now_or_offer(frame)

