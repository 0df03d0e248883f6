"""The TCP side of the test doubles of HTTP services (the OpenAI-compatible server, the VOICEVOX engine): a server on
127.0.0.1 that is started and stopped like the real service, each connection served request by request until the
double says it ends (:meth:`LoopbackServer._serve_one`), and a stop that closes the port and cuts open connections."""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Self


class LoopbackServer:
    """Subclasses give :meth:`_serve_one`. ``keeps_address``: once stopped, :attr:`port` still says where it was, and
    a start after a stop comes back there (a service a client keeps looking for); ``path`` is what :attr:`base_url`
    adds after the address."""

    keeps_address = False
    path = ""

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        if self._server is None:
            if self.keeps_address and self._port:
                return self._port
            raise RuntimeError(f"the {type(self).__name__} is not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_connection, "127.0.0.1", self._port)
        if self.keeps_address:
            self._port = self.port

    async def stop(self) -> None:
        """The service quits: its port is closed, open connections cut."""
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            try:
                while await self._serve_one(reader, writer):
                    pass
            except (ConnectionError, asyncio.IncompleteReadError, ValueError):  # ValueError: not HTTP at all
                pass
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
        except asyncio.CancelledError:
            # Only stop() cancels handlers; on 3.11 asyncio's stream callback logs a cancelled handler as an error.
            pass
        finally:
            self._handlers.discard(task)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serves one request; False when the connection should end."""
        raise NotImplementedError


async def read_request_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]] | None:
    """The method, target and headers (names in lower case) of the next HTTP request on a connection; None when the
    client ends it. A line that is no request line raises ValueError (the connection ends)."""
    request_line = await reader.readline()
    if not request_line.strip():
        return None
    method, target, _ = request_line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return method, target, headers
