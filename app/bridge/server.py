"""The WebSocket bridge: relays the bus to external clients, each in its dialect (dialects.py).

The door: a web page's handshake is refused unless its ``Origin`` is allowed (origins.py); connections
are bounded in all and per address, and the last one is kept for the user's own client (:data:`OWN_ADDRESSES`,
or the token when one is set); a frame that could not be written out again is refused (frame_checks.py).

Out: every message, action and query on the bus goes to every authenticated client (states only to Madoi's
clients); a QueryResult goes only to the client that sent that query. In: a client may publish messages as the
user, as its hello identity or as its one ``user_<name>`` id (senders.py), within its address's quota of what it
may have stored (limits.AddressQuotas), and QueryResults for the queries it is asked (answering.py); never queries
(the app's camera and voice are not for clients). A client that announces a companion's metadata speaks as that
companion only, which takes part in the conversation while it is connected, and may send that companion's queries,
which the broker answers only once the user allowed it (guests.py). Everything else, and every invalid, oversize or
over-rate frame, is answered with a JSON-RPC error frame and dropped, with a log line; a client that keeps abusing
is closed with 1008 (policy violation). Frames above ``max_frame_bytes`` get an error; frames above four times
that are refused by the WebSocket layer itself (close 1009), which bounds memory. Pings close dead peers.

Streamed text goes to Madoi's clients that ask for it in their hello (streams.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Final

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State as ConnectionState

from app.bridge.answering import Answering
from app.bridge.auth import Hello, bearer_token, check_bind, hello_of, token_matches, welcome_frame
from app.bridge.bridge_guests import METADATA_TOPIC, BridgeGuests, guest_states
from app.bridge.client import ClientSession
from app.bridge.dialects import ConnectOptions, Dialect, decode, options_of
from app.bridge.errors import ErrorCode, FrameRejected, error_frame
from app.bridge.frame_checks import check_writable, may_nest_deeply
from app.bridge.limits import AbuseMeter, AddressQuotas, TokenBucket
from app.bridge.origins import BridgeOriginRefused, OriginPolicy
from app.bridge.relay import Relay
from app.bridge.results import ClientResults
from app.bridge.senders import Senders, is_stamped, stranger_id
from app.settings.sections import LOOPBACK_ORIGINS
from companions.common.tasks import TaskSet
from companions.companion.guests import Guests
from companions.conversation.participant import ParticipantRoster
from companions.trust.outbound import Outbound, PrivateWords
from companions.trust.policy import TrustPolicy
from companions.wire.bus import Bus, Subscription
from companions.wire.protocol import WIRE_TOPICS, Action, Message, Query, QueryResult, WireItem, parse_valid_frame
from companions.wire.query_broker import IN_PROCESS, QueryBroker

log = logging.getLogger(__name__)

POLICY_VIOLATION: Final = 1008
OWN_ADDRESSES: Final = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
"""Where a program or page that connects to ``localhost`` comes from. Without a token these connections are the
user's own for the slot kept for them: other addresses (127.0.0.2 and up) are chosen on purpose. With a token,
the connection that presents it is the user's own, from anywhere."""


@dataclass
class BridgeStats:
    connections: int = 0
    frames_in: int = 0
    published: int = 0
    rejected: int = 0
    dropped: int = 0  # frames dropped from slow clients' send queues (closed clients included)
    closed_by_policy: int = 0  # abuse, failed authentication, authentication timeout
    refused_origins: int = 0  # handshakes of web pages whose origin is not allowed
    refused_connections: int = 0  # handshakes over the bounds on connections (in all, per address)
    over_quota: int = 0  # messages refused because their address had stored its quota


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
        dialect: Dialect = Dialect.REFERENCE,
        client_answers: Iterable[str] = (),
        client_grace_s: float = 3.0,
        roster: ParticipantRoster | None = None,  # where companions of clients take part (guests.py) ...
        guests: Guests | None = None,  # ... and are present (the cast's guests: the local companions' prompts)
        allowed_origins: Iterable[str] = LOOPBACK_ORIGINS,  # the web pages admitted (origins.py)
        max_connections: int = 32,  # open and opening connections, in all ...
        max_connections_per_address: int = 8,  # ... and from one address
        max_messages_per_minute: int = 30,  # what one address may have stored (limits.AddressQuotas)
        max_stored_bytes_per_minute: int = 1_048_576,
        trust: TrustPolicy | None = None,  # who may get a private line (by default the broker's policy)
    ) -> None:
        check_bind(host, token)
        self._bus = bus
        self._broker = broker
        self.host = host
        self._requested_port = port
        self._token = token or None
        self._user_name = user_name
        self._reserved_ids = reserved_ids
        self._dialect = dialect  # for clients whose URL, hello or frames do not choose one
        self._senders = Senders(user_name, reserved_ids, lambda: {c.identity for c in self._clients if c.identity})
        self.answering = Answering(broker, settings_types=client_answers, grace_s=client_grace_s)
        self._max_frame_bytes = max_frame_bytes
        self._rate = max_frames_per_second
        self._send_queue_size = send_queue_size
        self._abuse_limit = abuse_limit
        self._abuse_forgiven = abuse_forgiven_per_s
        self._ping_interval = ping_interval
        self._ping_timeout = ping_timeout
        self._close_timeout = close_timeout
        self._auth_timeout = auth_timeout
        self.origins = OriginPolicy(())
        self._max_connections = self._max_per_address = 0
        self._quotas = AddressQuotas(0, 0)
        self.use_rules(allowed_origins=allowed_origins, max_connections=max_connections,
                       max_connections_per_address=max_connections_per_address,
                       max_messages_per_minute=max_messages_per_minute,
                       max_stored_bytes_per_minute=max_stored_bytes_per_minute)
        self.stats = BridgeStats()
        self._clients: set[ClientSession] = set()  # authenticated: they receive bus traffic
        self.guests = BridgeGuests(bus, roster, guests if guests is not None else Guests(), user_name=user_name)
        self._tasks = TaskSet("bridge")
        self._words = PrivateWords()  # which lines and pieces hold the user's private things (outbound.py)
        self._trust = trust or broker.trust
        self._relay = Relay(self._clients, broker, self.answering, self.guests,
                            private=(self._words, Outbound(self._trust), self._tasks))
        self.results = ClientResults(broker, self._relay, self.answering, self._tasks,
                                     lambda client, rejected: self._reject(client, rejected.code, rejected.message,
                                                                           rejected.item_id))
        self._server: Server | None = None
        self._subscription: Subscription | None = None
        self._stream_subscription: Subscription | None = None
        self._counter = 0
        self.error: str | None = None  # why the last start failed (e.g. the port is taken), for the UI

    def use_rules(self, *, allowed_origins: Iterable[str], max_connections: int, max_connections_per_address: int,
                  max_messages_per_minute: int, max_stored_bytes_per_minute: int) -> None:
        """The door's rules, from now on (the settings saved while the bridge runs): the next handshakes meet the
        new origins and bounds, a changed quota starts anew for every address; the refusals remembered stay."""
        refused = self.origins.refused
        self.origins = OriginPolicy(allowed_origins)
        self.origins.refused = refused
        self._max_connections = max_connections
        self._max_per_address = max_connections_per_address
        quota = (self._quotas.messages_per_minute, self._quotas.bytes_per_minute)
        if quota != (max_messages_per_minute, max_stored_bytes_per_minute):  # saving other settings renews none
            self._quotas = AddressQuotas(max_messages_per_minute, max_stored_bytes_per_minute)

    # -- lifecycle ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._server is not None:
            return
        # Direct: the relay never blocks (it writes to a socket with an empty buffer or queues per client), so it
        # runs inside publish and a frame reaches the socket without a trip through a bus queue and task.
        self._words.attach(self._bus)
        self._subscription = self._bus.subscribe(WIRE_TOPICS, self._relay.items, name="bridge", direct=True)
        self._stream_subscription = self._bus.subscribe("events", self._relay.streams, name="bridge-stream",
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
            self._words.close()
            self._subscription.close()
            self._subscription = None
            self._stream_subscription.close()
            self._stream_subscription = None
            self.error = f"the bridge cannot listen on {self.host}:{self._requested_port}: {err.strerror or err}"
            log.error("%s; the app runs on without it", self.error)
            return
        self.error = None
        self._trust.client_camera = self.client_camera
        log.info("bridge listening on ws://%s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._trust.client_camera == self.client_camera:  # a bridge started in its place keeps its own
            self._trust.client_camera = lambda _companion: frozenset()
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
        self._words.close()
        await self._tasks.cancel_all()

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

    def client_camera(self, companion: str) -> frozenset[str]:
        """The ids the client whose own camera answers ``companion``'s looks speaks as (its hello identity, its user
        id, and a page's or another client's words spoken as the user: senders.py), when exactly one client is
        registered as that companion's ``vision`` answerer (answering.py); else none (this computer's camera would
        answer, or whose camera is not known). A look by what such a client said is that client's user's
        (companions/trust/policy.py ``NOT_THIS_COMPUTERS``)."""
        asked = self._broker.responders_for("vision", companion) - {IN_PROCESS}
        clients = [c for c in self._clients if c.key in asked]
        if len(clients) != 1:
            return frozenset()
        client = clients[0]
        ids = {client.identity, self._senders.claim_of(client.key),
               None if client.own else stranger_id(client.origin, client.address)}
        return frozenset(i for i in ids if i)

    def client_sessions(self) -> list[ClientSession]:
        """The authenticated clients (their counters: ``sent``, ``dropped``, ``rejected`` ...)."""
        return list(self._clients)

    # -- connections -------------------------------------------------------------------------------------------

    def _check_handshake(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuses a handshake before it opens: a web page whose origin is not allowed (403), one connection too
        many (503 in all, 429 from one address), an unknown dialect (400), a wrong token (401)."""
        origins = request.headers.get_all("Origin")
        if len(origins) > 1 or not self.origins.allows(origins[0] if origins else None):
            origin = ", ".join(origins)
            self.stats.refused_origins += 1
            if self.origins.refuse(origin):
                self._bus.publish(BridgeOriginRefused(origin[:200]))
            return connection.respond(HTTPStatus.FORBIDDEN, f"web pages from {origin[:200]} may not use this bridge: "
                                      "allow the origin in Madoi's settings (Bridge tab) if you trust it\n")
        try:
            options = options_of(request.path)
        except FrameRejected as refused:
            log.warning("bridge: connection refused: %s", refused.message)
            return connection.respond(HTTPStatus.BAD_REQUEST, refused.message + "\n")
        presented = bearer_token(request.headers.get("Authorization")) or options.token
        if self._token is not None and presented is not None and not token_matches(presented, self._token):
            log.warning("bridge: connection refused: invalid token")
            return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid bridge token\n")
        too_many = self._too_many(connection, with_token=self._token is not None and presented is not None)
        if too_many is not None:
            self.stats.refused_connections += 1
            return too_many
        return None

    def _too_many(self, connection: ServerConnection, *, with_token: bool) -> Response | None:
        """A refusal when this connection would be one too many, in all or from its address; else ``None``.

        The last connection is kept for the user's own client: one that presented the token, or without a token
        one from :data:`OWN_ADDRESSES` (32 connections from 127.0.0.2-5 took every one, and the user's own client
        was refused). A client with the token is not bound per address either: strangers cannot use up its room.
        """
        assert self._server is not None
        address = _address_of(connection)
        own = with_token if self._token is not None else address in OWN_ADDRESSES
        others = [c for c in self._server.all_connections
                  if c is not connection and c.state is not ConnectionState.CLOSED]
        room = self._max_connections if own else max(1, self._max_connections - 1)
        if len(others) >= room:
            status, why = HTTPStatus.SERVICE_UNAVAILABLE, f"the bridge has {len(others)} connections already"
            if not own:
                why += " (the last is kept for the user's own client)"
        elif not with_token and sum(1 for c in others if _address_of(c) == address) >= self._max_per_address:
            status, why = HTTPStatus.TOO_MANY_REQUESTS, f"{address} has {self._max_per_address} connections already"
        else:
            return None
        if self.stats.refused_connections % 100 == 0:  # a flood of handshakes must not flood the log
            log.warning("bridge: connection refused: %s (%d refused so far)", why, self.stats.refused_connections + 1)
        return connection.respond(status, why + "\n")

    def _authenticated_by_handshake(self, headers: Headers, options: ConnectOptions) -> bool:
        if self._token is None:
            return True
        return token_matches(bearer_token(headers.get("Authorization")) or options.token, self._token)

    async def _handle(self, ws: ServerConnection) -> None:
        self._counter += 1
        self.stats.connections += 1
        client = ClientSession(ws, f"bridge:{self._counter}", queue_size=self._send_queue_size,
                               bucket=TokenBucket(self._rate),
                               abuse=AbuseMeter(self._abuse_limit, self._abuse_forgiven),
                               address=_address_of(ws))
        assert ws.request is not None
        options = options_of(ws.request.path)  # checked in the handshake
        client.dialect = options.dialect or self._dialect
        client.dialect_known = options.dialect is not None
        if options.companion:
            client.companions = {options.companion}
        client.origin = ws.request.headers.get("Origin")
        if self._authenticated_by_handshake(ws.request.headers, options):
            # The user's own: with a token, the one presenting it; without, a program on this computer (127.0.0.1,
            # ::1) that is no web page (a page gets what any client gets unless it presents the token).
            client.own = self._token is not None or (client.address in OWN_ADDRESSES and client.origin is None)
            self._admit(client)
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
                first = False
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
            self.guests.left(client)
            self._senders.release(client.key)
            self._broker.unregister_external(client.key)
            self.stats.dropped += client.dropped

    def _admit(self, client: ClientSession) -> None:
        """Makes an authenticated client a receiver of bus traffic and a responder for its announced types."""
        client.authenticated = True
        self.answering.admitted(client)
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
        if client.rejected <= 20 or client.rejected % 1000 == 0:  # a flood must not flood the log
            log.info("bridge: frame from %s rejected (%d, %d so far): %s", client.key, code, client.rejected,
                     message[:200])
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
        if client.authenticated and not may_nest_deeply(raw):
            valid = parse_valid_frame(raw)  # one pass over the text; None: the full checks below say why
            if valid is not None:
                self._detected(client, Dialect.REFERENCE)
                self._take(client, valid)
                return
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise FrameRejected(ErrorCode.PARSE_ERROR, f"invalid JSON: {err}") from None
        check_writable(raw, data)  # no lone surrogate, no deep nesting (frame_checks.py)
        hello = hello_of(data)
        if hello is not None:
            if not first:
                raise FrameRejected(ErrorCode.INVALID_REQUEST, "hello must be the first frame")
            self._greet(client, hello)
            return
        if not client.authenticated:
            raise FrameRejected(ErrorCode.UNAUTHENTICATED, "authentication required: send the token first")
        if isinstance(data, dict) and data.get("topic") == METADATA_TOPIC:
            metadata = self.guests.announce(client, data.get("body"), taken=self._taken(client))
            client.offer(json.dumps({"topic": METADATA_TOPIC, "body": {"ok": True, "id": metadata.id}}))
            return
        states = guest_states(data) if client.guest is not None else None
        if states is not None:
            for state in states:  # the reference's companions publish their votes as an array
                self._take(client, state)
            return
        item, shown = decode(data)
        if shown is not None:
            self._detected(client, shown)
        self._take(client, item)
        if isinstance(item, Message) and shown is Dialect.LEGACY:  # taken: a refused message teaches nothing
            companions = set(item.params.to) & set(self._reserved_ids())
            if len(companions) == 1:
                self.answering.learn_companion(client, companions.pop())

    def _detected(self, client: ClientSession, dialect: Dialect) -> None:
        """The first frame that shows a dialect decides the client's, unless its URL or hello chose one."""
        if client.dialect_known:
            return
        client.dialect_known = True
        if dialect is not client.dialect:
            log.info("bridge: client %s speaks the %s dialect", client.key, dialect.value)
            client.dialect = dialect
            self.answering.admitted(client)

    def _take(self, client: ClientSession, item: WireItem) -> None:
        """Acts on a valid item from an authenticated client, or raises :class:`FrameRejected`."""
        if isinstance(item, QueryResult):
            self.results.answer(client, item)
        elif client.guest is not None:  # a companion's connection: it speaks as its companion only
            if isinstance(item, Message):
                self._stored(client, item)
            if self.guests.take(client, item):
                if isinstance(item, Query):
                    if self._relay.is_origin(item.id) or self._broker.is_pending(item.id):
                        raise FrameRejected(ErrorCode.FORBIDDEN, "query id already in use", item.id)
                    self._relay.sent_by(item, client)  # its result goes back to this client alone
                self._bus.publish(item)
                self.stats.published += 1
        elif isinstance(item, Query):
            # The app's camera and voice answer this app's companions, never a client: a query from a
            # client as itself, as a user or as a companion never reaches the broker. (A client's own companion
            # may ask, above: the broker asks the user.)
            raise FrameRejected(ErrorCode.FORBIDDEN, "clients may not send queries: the app's camera and voice "
                                "answer this app's own companions only", item.id)
        elif isinstance(item, Message):
            self._senders.check(client.key, client.identity, item.params.from_)
            if not client.own and item.params.from_ == self._user_name:
                # Not the user's own client (a page without the token): its words are its own (senders.py)
                item = item.model_copy(update={"params": item.params.model_copy(
                    update={"from_": stranger_id(client.origin, client.address)})})
            self._stored(client, item)
            self._bus.publish(item)
            self.stats.published += 1
        else:
            what = "actions (a companion's gestures)" if isinstance(item, Action) else "states (a companion's votes)"
            raise FrameRejected(ErrorCode.FORBIDDEN, f"clients may not publish {what}: Madoi refuses them, "
                                "unlike the reference firehose; send messages and query results")

    def _stored(self, client: ClientSession, message: Message) -> None:
        """Counts ``message`` against its address's quota of what it may have stored, or raises."""
        params, text = message.params, message.params.message
        size = (len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))) + len(params.id) \
            + len(params.from_) + (sum(map(len, params.to)) if params.to else 0)
        if not self._quotas.of(client.address).take(size):
            self.stats.over_quota += 1
            raise FrameRejected(ErrorCode.OVER_QUOTA, f"{client.address} has stored its quota "
                                f"({self._quotas.messages_per_minute} messages and {self._quotas.bytes_per_minute} "
                                "bytes a minute, across its connections): the message was not stored", params.id)

    def _greet(self, client: ClientSession, hello: Hello) -> None:
        if not client.authenticated and self._token is not None and not token_matches(hello.token, self._token):
            raise FrameRejected(ErrorCode.UNAUTHENTICATED, "invalid or missing token")
        if not client.authenticated and self._token is not None:
            client.own = True  # it presented the token
        refused: FrameRejected | None = None
        if hello.id is not None:
            if hello.id in self._taken(client) or is_stamped(hello.id):
                refused = FrameRejected(ErrorCode.FORBIDDEN, f"identity {hello.id!r} is not available")
            else:
                client.identity = hello.id
        if refused is None:
            if hello.companions is not None:
                client.companions = set(hello.companions)
            if hello.answers and not client.companions:
                refused = FrameRejected(ErrorCode.INVALID_REQUEST, "a client answers queries for the companions it "
                                        "names: add 'companions' to the hello (or ?companion= to the URL)")
            else:
                client.answers = list(dict.fromkeys(hello.answers))
        client.stream, client.turns = hello.stream, hello.turns
        client.dialect, client.dialect_known = Dialect(hello.dialect), True
        if client not in self._clients:
            self._admit(client)  # authenticated by the token: it stays, even if its identity was refused
        else:
            self.answering.admitted(client)
        if refused is not None:
            raise refused
        if hello.metadata is not None:
            self.guests.announce(client, hello.metadata, taken=self._taken(client))
        client.offer(welcome_frame(client.identity, client.answers, stream=client.stream, turns=client.turns,
                                   companion=client.guest))

    def _taken(self, client: ClientSession) -> set[str]:
        """The ids ``client`` may not take as its identity or its companion's."""
        return {*self._reserved_ids(), *self.guests.ids(), *self._senders.claimed(),
                *(c.identity for c in self._clients if c is not client and c.identity)}


def _address_of(connection: ServerConnection) -> str:
    """The client's IP address (its quota and its share of the connections are counted by it)."""
    return str(connection.remote_address[0]) if connection.remote_address else "unknown"
