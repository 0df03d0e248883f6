"""One connected bridge client: who it is, what it may do, and its bounded send queue.

The bus relay never waits on a client: it writes a small frame at once when nothing is queued and the socket's
write buffer is empty (see :meth:`ClientSession.send_now_or_offer`), else it *offers* the frame to the client's
bounded queue, which a sender task per client writes to the socket. When a client reads too slowly the queue fills
and the oldest frame is dropped (counted in ``dropped``), so a slow client never stalls the bus or the other
clients. Frames are ``str`` or UTF-8 ``bytes``, always sent as text frames.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from app.bridge.dialects import Dialect
from app.bridge.limits import AbuseMeter, TokenBucket

_DIRECT_MAX_BYTES = 16_384  # half the websockets write limit (32 KiB)


class ClientSession:
    def __init__(self, ws: ServerConnection, key: str, *, queue_size: int, bucket: TokenBucket,
                 abuse: AbuseMeter, address: str) -> None:
        self.ws = ws
        self.key = key  # connection-unique; the broker knows the client as a responder by this id
        self.identity: str | None = None  # the `from` it declared in its hello, if any
        self.guest: str | None = None  # the companion it announced and speaks for (guests.py), if any
        self.answers: list[str] = []  # query types it is asked first for (its hello, dialect, the settings)
        self.companions: set[str] | None = None  # ... for these companions' queries only (None: not known yet)
        self.any_companion = False  # ... or for every companion's (the settings' client_answers, answering.py)
        self.speaks_itself = False  # says its companion's lines itself (legacy): its speak queries are answered
        self.dialect = Dialect.REFERENCE
        self.dialect_known = False  # chosen (URL, hello) or detected from a frame: no more detection
        self.stream = False  # asked in its hello for ``message.stream`` notifications
        self.turns = False  # ... for ``turn.phase`` notifications
        self.authenticated = False
        # The user's own client (server.py): it gets every line; any other only a private line (one that holds what
        # the camera saw, the user's files or past conversations) the user allowed it (companions/trust/outbound.py).
        self.own = False
        self.origin: str | None = None  # the web page it is (its Origin header), if it is one
        self.frames_in = 0
        self.rejected = 0
        self.sent = 0
        self.dropped = 0
        self.close_reason: str | None = None
        self.bucket = bucket
        self.abuse = abuse
        self.address = address  # where it connects from: what it may have stored is its address's (AddressQuotas)
        self._queue: collections.deque[str | bytes] = collections.deque()
        self._queue_size = queue_size
        self._wakeup = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()

    def offer(self, frame: str | bytes) -> None:
        """Queues a frame for sending; never blocks. A full queue drops its oldest frame."""
        if len(self._queue) >= self._queue_size:
            self._queue.popleft()
            self.dropped += 1
        self._queue.append(frame)
        self.idle.clear()
        self._wakeup.set()

    def send_now_or_offer(self, frame: bytes) -> None:
        """Writes ``frame`` (UTF-8 text) at once when that cannot wait, else queues it (see :meth:`offer`).

        It cannot wait when nothing is queued or being sent and the socket's write buffer is empty: the frame goes
        to the transport synchronously (``broadcast``, the public synchronous send of websockets), and a small
        frame into an empty buffer cannot reach the high-water mark (``write_limit``, 32 KiB) past which
        ``send`` would wait. This saves the relay a hop through the sender task, keeps the order of frames, and
        never lets a slow client hold the relay up. Never blocks, never raises.
        """
        transport = self.ws.transport
        if (self._queue or not self.idle.is_set() or len(frame) > _DIRECT_MAX_BYTES or transport.is_closing()
                or transport.get_write_buffer_size() > 0):
            self.offer(frame)
            return
        if self.ws.state is not State.OPEN:
            return  # closing: the frame could not be sent anyway (as ``send`` raising ConnectionClosed)
        broadcast((self.ws,), frame, text=True)
        self.sent += 1

    @property
    def queued(self) -> int:
        return len(self._queue)

    async def run_sender(self) -> None:
        """Writes queued frames to the socket until the connection closes (or the task is cancelled)."""
        while True:
            if not self._queue:
                self.idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            frame = self._queue.popleft()
            try:
                await self.ws.send(frame, text=True)
            except ConnectionClosed:
                self._queue.clear()
                self.idle.set()
                return
            self.sent += 1

    async def flush(self, timeout: float) -> None:
        """Waits (bounded) until the queue is written, e.g. so an error frame goes out before a close."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.idle.wait()
