"""One connected bridge client: who it is, what it may do, and its bounded send queue.

The bus relay only *offers* frames to a client; a sender task per client writes them to the socket. When a client
reads too slowly the queue fills and the oldest frame is dropped (counted in ``dropped``), so a slow client never
stalls the bus or the other clients.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from app.bridge.limits import AbuseMeter, TokenBucket

_DIRECT_MAX_CHARS = 4096  # at most 16 KiB of UTF-8: half the websockets write limit


class ClientSession:
    def __init__(self, ws: ServerConnection, key: str, *, queue_size: int, bucket: TokenBucket,
                 abuse: AbuseMeter) -> None:
        self.ws = ws
        self.key = key  # connection-unique; the broker knows the client as a responder by this id
        self.identity: str | None = None  # the `from` it declared in its hello, if any
        self.answers: list[str] = []
        self.authenticated = False
        self.frames_in = 0
        self.rejected = 0
        self.sent = 0
        self.dropped = 0
        self.close_reason: str | None = None
        self.bucket = bucket
        self.abuse = abuse
        self._queue: collections.deque[str] = collections.deque()
        self._queue_size = queue_size
        self._wakeup = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()

    def offer(self, frame: str) -> None:
        """Queues a frame for sending; never blocks. A full queue drops its oldest frame."""
        if len(self._queue) >= self._queue_size:
            self._queue.popleft()
            self.dropped += 1
        self._queue.append(frame)
        self.idle.clear()
        self._wakeup.set()

    async def send_now_or_offer(self, frame: str) -> None:
        """Writes ``frame`` at once when that cannot wait, else queues it (see :meth:`offer`).

        It cannot wait when nothing is queued or being sent and the socket's write buffer is empty: websockets
        writes a frame to the transport synchronously and only waits when the buffer passes its high-water mark
        (``write_limit``, 32 KiB), which a small frame into an empty buffer cannot reach. This saves the bus relay
        one hop through the sender task, in order, without letting a slow client hold the relay up.
        """
        transport = self.ws.transport
        if (self._queue or not self.idle.is_set() or len(frame) > _DIRECT_MAX_CHARS or transport.is_closing()
                or transport.get_write_buffer_size() > 0):
            self.offer(frame)
            return
        try:
            await self.ws.send(frame)
            self.sent += 1
        except ConnectionClosed:
            pass

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
                await self.ws.send(frame)
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
