"""The WebSocket bridge: relays the bus to external clients in the reference framing ``{"topic", "body"}``.

Out: every message, action, state and query on the bus goes to every authenticated client; a QueryResult goes
only to the client that sent that query. In: a client may publish messages and queries whose ``from`` is the
user's name or its own ``hello`` identity, and QueryResults for queries the broker allows it to answer (the types
it announced in ``hello``). Everything else, and every invalid, oversize or over-rate frame, is answered with a
JSON-RPC error frame and dropped; a client that keeps abusing is closed with 1008 (policy violation). Frames
above ``max_frame_bytes`` get an error; frames above four times that are refused by the WebSocket layer itself
(close 1009), which bounds memory. Pings close dead peers.

Streamed text (only to clients whose ``hello`` said ``"stream": true``; clients of the reference framework validate
frames strictly and never get it): while a companion's model writes a line, each piece goes out as a JSON-RPC
notification in the same framing as everything else (streams.py),
``{"topic": "stream", "body": {"jsonrpc": "2.0", "method": "message.stream", "params": {"id", "from", "delta",
"done", "kind", "dropped"?}}}``. ``id`` is the turn (the id of the message being answered), ``from`` the
companion, ``delta`` the new text, ``kind`` ``"speech"`` (the text of its ``speak`` call: what it will say) or
``"text"`` (plain reply text, tool syntax and JSON held back). ``done: true`` (with ``delta: ""``) ends one model
request's text; a turn may stream again (a second attempt replaces the first). The line is final when the
companion's ``message.send`` arrives (its own id; it replaces the streamed text); ``done: true, dropped: true``
says the turn ended without saying it (interrupted, failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from app.bridge.auth import HELLO_TOPIC, Hello, bearer_token, check_bind, hello_of, token_matches, welcome_frame
from app.bridge.client import ClientSession
from app.bridge.errors import ErrorCode, FrameRejected, error_frame
from app.bridge.limits import AbuseMeter, TokenBucket
from app.bridge.streams import StreamFrames
from companions.bus import Bus, BusItem, LocalEvent, Subscription
from companions.protocol import (
    WIRE_TOPICS,
    Action,
    Message,
    ProtocolError,
    Query,
    QueryResult,
    State,
    WireItem,
    parse_body,
    parse_valid_frame,
    to_json_bytes,
    topic_of,
)
from companions.query_broker import QueryBroker, Verdict
from companions.worker import TextStreamed, TurnEnded

log = logging.getLogger(__name__)

POLICY_VIOLATION: Final = 1008
_ORIGINS_CAP: Final = 10_000


@dataclass
class BridgeStats:
    connections: int = 0
    frames_in: int = 0
    published: int = 0
    results_accepted: int = 0
    rejected: int = 0
    dropped: int = 0  # frames dropped from slow clients' send queues (closed clients included)
    closed_by_policy: int = 0  # abuse, failed authentication, authentication timeout


class BridgeServer:
    """The bridge as a runtime component. ``port=0`` binds an ephemeral port (see :attr:`port`)."""

    name = "bridge"

    def __init__(
        self,
        bus: Bus,
        broker: QueryBroker,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        token: str | None = None,
        user_name: str = "user",
        reserved_ids: Callable[[], Iterable[str]] = frozenset,
        max_frame_bytes: int = 1_048_576,
        max_frames_per_second: float = 50.0,
        send_queue_size: int = 1024,
        abuse_limit: float = 50.0,
        abuse_forgiven_per_s: float = 5.0,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        close_timeout: float = 1.0,  # within the runtime's 1.5 s stop budget
        auth_timeout: float = 5.0,
    ) -> None:
        check_bind(host, token)
        self._bus = bus
        self._broker = broker
        self.host = host
        self._requested_port = port
        self._token = token or None
        self._user_name = user_name
        self._reserved_ids = reserved_ids
        self._max_frame_bytes = max_frame_bytes
        self._rate = max_frames_per_second
        self._send_queue_size = send_queue_size
        self._abuse_limit = abuse_limit
        self._abuse_forgiven = abuse_forgiven_per_s
        self._ping_interval = ping_interval
        self._ping_timeout = ping_timeout
        self._close_timeout = close_timeout
        self._auth_timeout = auth_timeout
        self.stats = BridgeStats()
        self._clients: set[ClientSession] = set()  # authenticated: they receive bus traffic
        self._origins: dict[str, ClientSession] = {}  # query id -> the client that sent it
        self._changed = asyncio.Condition()
        self._server: Server | None = None
        self._subscription: Subscription | None = None
        self._stream_subscription: Subscription | None = None
        self._stream_frames = StreamFrames()
        self._counter = 0
        self.error: str | None = None  # why the last start failed (e.g. the port is taken), for the UI

    # -- lifecycle ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._server is not None:
            return
        # Direct: the relay never blocks (it writes to a socket with an empty buffer or queues per client), so it
        # runs inside publish and a frame reaches the socket without a trip through a bus queue and task.
        self._subscription = self._bus.subscribe(WIRE_TOPICS, self._relay, name="bridge", direct=True)
        self._stream_subscription = self._bus.subscribe("events", self._relay_stream, name="bridge-stream",
                                                        direct=True)
        try:
            self._server = await serve(
                self._handle, self.host, self._requested_port,
                process_request=self._check_handshake,
                max_size=4 * self._max_frame_bytes,
                compression=None,  # no inflate bombs, and lower latency for small frames
                ping_interval=self._ping_interval, ping_timeout=self._ping_timeout,
                close_timeout=self._close_timeout,  # a dead peer never completes the closing handshake
            )
        except OSError as err:
            self._subscription.close()
            self._subscription = None
            self._stream_subscription.close()
            self._stream_subscription = None
            self.error = f"the bridge cannot listen on {self.host}:{self._requested_port}: {err.strerror or err}"
            log.error("%s; the app runs on without it", self.error)
            return
        self.error = None
        log.info("bridge listening on ws://%s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        if self._stream_subscription is not None:
            self._stream_subscription.close()
            self._stream_subscription = None
        if self._server is not None:
            self._server.close()  # closes every connection (1001) and waits for their handlers
            await self._server.wait_closed()
            self._server = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        """The port actually bound (useful after binding port 0)."""
        if self._server is None:
            raise RuntimeError("the bridge is not running")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def client_sessions(self) -> list[ClientSession]:
        """The authenticated clients (their counters: ``sent``, ``dropped``, ``rejected`` ...)."""
        return list(self._clients)

    async def wait_for_clients(self, count: int, timeout: float = 5.0) -> None:
        """Waits until exactly ``count`` authenticated clients are connected."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self._clients) == count)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # -- bus -> clients ----------------------------------------------------------------------------------------

    def _relay(self, item: BusItem) -> None:
        """A direct bus subscriber: called inside publish, so it must never wait (see ``send_now_or_offer``)."""
        if isinstance(item, QueryResult):
            origin = self._origins.pop(item.id, None)
            if origin is not None and origin in self._clients:
                origin.send_now_or_offer(_frame_bytes(item))
            return
        if not self._clients or isinstance(item, LocalEvent):
            return
        frame = _frame_bytes(item)  # serialised once for every client
        for client in list(self._clients):
            client.send_now_or_offer(frame)

    def _relay_stream(self, item: BusItem) -> None:
        """A direct subscriber to ``events``: streamed text to the clients that asked for it (never waits)."""
        if not isinstance(item, TextStreamed | TurnEnded):
            return
        frame = self._stream_frames.frame(item)
        if frame is None:
            return
        for client in list(self._clients):
            if client.stream:
                client.send_now_or_offer(frame)

    # -- connections -------------------------------------------------------------------------------------------

    def _check_handshake(self, connection: ServerConnection, request: Request) -> Response | None:
        presented = bearer_token(request.headers.get("Authorization"))
        if self._token is not None and presented is not None and not token_matches(presented, self._token):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid bridge token\n")
        return None

    def _authenticated_by_header(self, headers: Headers) -> bool:
        if self._token is None:
            return True
        return token_matches(bearer_token(headers.get("Authorization")), self._token)

    async def _handle(self, ws: ServerConnection) -> None:
        self._counter += 1
        self.stats.connections += 1
        client = ClientSession(ws, f"bridge:{self._counter}", queue_size=self._send_queue_size,
                               bucket=TokenBucket(self._rate),
                               abuse=AbuseMeter(self._abuse_limit, self._abuse_forgiven))
        assert ws.request is not None
        if self._authenticated_by_header(ws.request.headers):
            self._admit(client)
            await self._notify()
        sender = asyncio.get_running_loop().create_task(client.run_sender(), name=f"bridge-send:{client.key}")
        try:
            first = True
            while client.close_reason is None:
                if client.authenticated:
                    raw = await ws.recv()
                else:
                    try:
                        async with asyncio.timeout(self._auth_timeout):
                            raw = await ws.recv()
                    except TimeoutError:
                        client.close_reason = "authentication timeout"
                        break
                self._on_frame(client, raw, first=first)
                if first:
                    first = False
                    await self._notify()  # a hello may have admitted it
            await client.flush(timeout=1.0)
            self.stats.closed_by_policy += 1
            await ws.close(POLICY_VIOLATION, client.close_reason)
        except ConnectionClosed:
            pass
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
            self._clients.discard(client)
            self._broker.unregister_external(client.key)
            self.stats.dropped += client.dropped
            await self._notify()

    def _admit(self, client: ClientSession) -> None:
        """Makes an authenticated client a receiver of bus traffic and a responder for its announced types."""
        client.authenticated = True
        if client.answers:
            self._broker.register_external(client.key, client.answers)
        self._clients.add(client)

    # -- clients -> bus ----------------------------------------------------------------------------------------

    def _on_frame(self, client: ClientSession, raw: str | bytes, *, first: bool) -> None:
        self.stats.frames_in += 1
        client.frames_in += 1
        try:
            self._accept(client, raw, first=first)
        except FrameRejected as rejected:
            self._reject(client, rejected.code, rejected.message, rejected.item_id)
        except Exception:  # a bug here must cost one frame, not the connection
            log.exception("bridge: unexpected failure on a frame from %s", client.key)
            self._reject(client, ErrorCode.INTERNAL_ERROR, "internal error")

    def _reject(self, client: ClientSession, code: ErrorCode, message: str, item_id: str | None = None) -> None:
        self.stats.rejected += 1
        client.rejected += 1
        client.offer(error_frame(code, message, item_id))
        if not client.authenticated:
            client.close_reason = "authentication required"
        elif client.abuse.strike():
            client.close_reason = "too many rejected frames"

    def _accept(self, client: ClientSession, raw: str | bytes, *, first: bool) -> None:
        if not client.bucket.take():
            raise FrameRejected(ErrorCode.RATE_LIMITED, f"rate limit exceeded ({self._rate:g} frames/s)")
        # UTF-8 takes at most 4 bytes per character: most text frames need no encoding to be measured.
        if isinstance(raw, bytes) or 4 * len(raw) > self._max_frame_bytes:
            size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
            if size > self._max_frame_bytes:
                raise FrameRejected(ErrorCode.TOO_LARGE, f"frame of {size} bytes exceeds {self._max_frame_bytes}")
        if client.authenticated:
            valid = parse_valid_frame(raw)  # one pass over the text; None: the full checks below say why
            if valid is not None:
                self._take(client, valid)
                return
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise FrameRejected(ErrorCode.PARSE_ERROR, f"invalid JSON: {err}") from None
        hello = hello_of(data)
        if hello is not None:
            if not first:
                raise FrameRejected(ErrorCode.INVALID_REQUEST, "hello must be the first frame")
            self._greet(client, hello)
            return
        if not client.authenticated:
            raise FrameRejected(ErrorCode.UNAUTHENTICATED, "authentication required: send the token first")
        self._take(client, _item_of(data))

    def _take(self, client: ClientSession, item: WireItem) -> None:
        """Acts on a valid item from an authenticated client, or raises :class:`FrameRejected`."""
        if isinstance(item, QueryResult):
            self._answer(client, item)
        elif isinstance(item, Message | Query):
            self._check_sender(client, item.params.from_)
            if isinstance(item, Query):
                if item.id in self._origins or self._broker.is_pending(item.id):
                    raise FrameRejected(ErrorCode.FORBIDDEN, "query id already in use", item.id)
                if len(self._origins) >= _ORIGINS_CAP:
                    del self._origins[next(iter(self._origins))]
                self._origins[item.id] = client
            self._bus.publish(item)
            self.stats.published += 1
        else:
            topic = "actions" if isinstance(item, Action) else "states"
            raise FrameRejected(ErrorCode.FORBIDDEN, f"clients may not publish on {topic!r}")

    def _greet(self, client: ClientSession, hello: Hello) -> None:
        if not client.authenticated and self._token is not None and not token_matches(hello.token, self._token):
            raise FrameRejected(ErrorCode.UNAUTHENTICATED, "invalid or missing token")
        refused: FrameRejected | None = None
        if hello.id is not None:
            taken = {c.identity for c in self._clients if c is not client}
            if hello.id in set(self._reserved_ids()) or hello.id in taken:
                refused = FrameRejected(ErrorCode.FORBIDDEN, f"identity {hello.id!r} is not available")
            else:
                client.identity = hello.id
        if refused is None:
            client.answers = list(dict.fromkeys(hello.answers))
        client.stream = hello.stream
        if client not in self._clients:
            self._admit(client)  # authenticated by the token: it stays, even if its identity was refused
        elif client.answers:
            self._broker.register_external(client.key, client.answers)
        if refused is not None:
            raise refused
        client.offer(welcome_frame(client.identity, client.answers, stream=client.stream))

    def _check_sender(self, client: ClientSession, sender: str) -> None:
        if sender not in (self._user_name, client.identity):
            allowed = ", ".join(repr(s) for s in (self._user_name, client.identity) if s)
            raise FrameRejected(ErrorCode.FORBIDDEN, f"forged from {sender!r}: this client may send as {allowed}")

    def _answer(self, client: ClientSession, result: QueryResult) -> None:
        verdict = self._broker.submit_result(result, client.key)
        if verdict is Verdict.ACCEPTED:
            self.stats.results_accepted += 1
            return
        code = ErrorCode.FORBIDDEN if verdict is Verdict.NOT_ALLOWED else ErrorCode.REJECTED_RESULT
        raise FrameRejected(code, verdict.value, result.id)


def _frame_bytes(item: WireItem) -> bytes:
    """The same frame as :func:`companions.protocol.frame_of`, as UTF-8 by pydantic's faster JSON encoder."""
    return b'{"topic":"%s","body":%s}' % (topic_of(item).encode(), to_json_bytes(item))


def _item_of(data: Any) -> Message | Action | State | Query | QueryResult:
    """The wire item of a decoded frame (the checks of :func:`companions.protocol.parse_frame`, parsed once)."""
    if not isinstance(data, dict):
        raise FrameRejected(ErrorCode.INVALID_REQUEST, f"a frame must be a JSON object, got {type(data).__name__}")
    if set(data) != {"topic", "body"}:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, "a frame has exactly the fields 'topic' and 'body'")
    topic = data["topic"]
    if not isinstance(topic, str):
        raise FrameRejected(ErrorCode.INVALID_REQUEST, "'topic' must be a string")
    if topic == HELLO_TOPIC:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, "hello must be the first frame")
    try:
        return parse_body(topic, data["body"])
    except ProtocolError as err:
        raise FrameRejected(ErrorCode.INVALID_REQUEST, str(err)) from None
