"""MCP servers' tools as a companion's tools, through the official ``mcp`` SDK.

Each server gets one :class:`McpConnection`: an owned task enters the SDK's ``Client`` (stdio: the command as a
subprocess, its stderr kept for the report; or streamable HTTP), lists the tools, then holds the session open until
the companion stops (anyio's cancel scopes must be left by the task that entered them). Each listed tool becomes a
:class:`~companions.tools.schema_tools.SchemaTool`: the same JSON-Schema validation, timeout, hooks and error results as
a built-in tool.

Failures are values: a server that cannot start is reported (with the end of its stderr) and the companion keeps
its other tools; a server that dies later makes its tools answer "not available" at once, and is reported once.
``mcp`` takes half a second to import, so it is imported only when a companion has servers to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, Final, Literal, TypeAlias

from companions.common.tasks import TaskSet
from companions.tools.functions import BaseTool, ToolFailed, ToolRegistry
from companions.tools.mcp_config import McpServer
from companions.tools.schema_tools import SchemaTool

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult, Tool

log = logging.getLogger(__name__)

State: TypeAlias = Literal["stopped", "starting", "running", "failed", "dead"]
_TOOL_NAME: Final = re.compile(r"[^A-Za-z0-9_-]")
STDERR_TAIL: Final = 400  # characters of a failed server's stderr in its report
PING_INTERVAL_S: Final = 15.0  # an idle session is probed this often, so a server that died is noticed and shown
PING_TIMEOUT_S: Final = 10.0


def _tool_name(name: str) -> str:
    """A name the OpenAI tool format accepts (``^[A-Za-z0-9_-]{1,64}$``)."""
    return _TOOL_NAME.sub("_", name)[:64] or "tool"


def _describe(err: BaseException) -> str:
    """The innermost useful message of an exception (anyio wraps transport failures in exception groups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def result_text(result: CallToolResult) -> str:
    """An MCP tool result as the text the model reads: its text blocks, else its structured content."""
    parts: list[str] = []
    for block in result.content:
        text = getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} omitted]")
    if not any(p.strip() for p in parts) and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    return "\n".join(parts)


class McpConnection:
    """One MCP server of one companion: start it, offer its tools, call them, close it."""

    def __init__(self, server: McpServer, owner: str, report: Callable[[str], None], *,
                 ping_interval_s: float = PING_INTERVAL_S) -> None:
        self.server = server
        self.ping_interval_s = ping_interval_s
        self.owner = owner
        self.report = report
        self.state: State = "stopped"
        self.error = ""
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._gone = asyncio.Event()  # set when the session ended (stopped, failed or died)
        self._tasks = TaskSet(f"mcp:{owner}:{server.name}")
        self._stderr: IO[str] | None = None

    @property
    def label(self) -> str:
        return f"MCP server {self.server.name!r} ({self.server.where})"

    async def start(self) -> list[Tool]:
        """Starts the server and returns its tools (only those the config names, when it names some).

        Raises:
            RuntimeError: the server could not be started or listed, worded for the user.
        """
        self.state = "starting"
        listed: asyncio.Future[list[Tool]] = asyncio.get_running_loop().create_future()
        task = self._tasks.spawn(self._serve(listed), name=f"mcp-{self.owner}-{self.server.name}")
        try:
            async with asyncio.timeout(self.server.start_timeout_s):
                tools = await asyncio.shield(listed)
        except TimeoutError:
            task.cancel()
            self._fail(f"did not answer within {self.server.start_timeout_s:g} s")
            raise RuntimeError(self.error) from None
        except Exception as err:
            self._fail(_describe(err))
            raise RuntimeError(self.error) from None
        self.state = "running"
        wanted = self.server.tools
        return [t for t in tools if wanted is None or t.name in wanted]

    def _fail(self, reason: str) -> None:
        tail = self._stderr_tail()
        self.state = "failed"
        self.error = f"{self.label} could not start: {reason}" + (f" (stderr: {tail})" if tail else "")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return " ".join(text.split())[-STDERR_TAIL:]

    def _transport(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        s = self.server
        if s.url is not None:
            return s.url
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed in _serve)
        params = StdioServerParameters(command=s.command or "", args=list(s.args), env=dict(s.env) or None, cwd=s.cwd)
        return stdio_client(params, errlog=self._stderr)

    async def _serve(self, listed: asyncio.Future[list[Tool]]) -> None:
        """The session's life, in one task: enter the client, list the tools, wait for the stop, leave."""
        from mcp import Client

        try:
            async with Client(self._transport()) as client:
                tools: list[Tool] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self._client = client
                listed.set_result(tools)
                await self._watch(client)
        except asyncio.CancelledError:
            if not listed.done():
                listed.cancel()
            raise
        except Exception as err:  # the SDK raises transport errors in exception groups; all end this server
            if not listed.done():
                listed.set_exception(err)
            else:
                self._died(_describe(err))
        finally:
            self._client = None
            self._gone.set()
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None

    async def _watch(self, client: Client) -> None:
        """Waits for the stop, probing the server (a tool listing) every ``ping_interval_s``: a stdio server that
        exits says nothing by itself."""
        from mcp import MCPError

        while not self._stop.is_set():
            try:
                async with asyncio.timeout(self.ping_interval_s):
                    await self._stop.wait()
                return
            except TimeoutError:
                pass
            try:
                async with asyncio.timeout(PING_TIMEOUT_S):  # (MCP's ping is gone from the 2026 protocol)
                    await client.list_tools(cache_mode="bypass")
            except (MCPError, TimeoutError) as err:
                self._died(f"it no longer answers ({_describe(err)})")
                return

    def _died(self, reason: str) -> None:
        if self.state in ("dead", "stopped"):
            return
        self.state = "dead"
        self.error = f"{self.label} stopped working: {reason}"
        log.warning("%s: %s", self.owner, self.error)
        self.report(self.error)

    def unavailable(self) -> str | None:
        """Why this server's tools cannot run now, or None."""
        if self.state == "running" and self._client is not None:
            return None
        return self.error or f"{self.label} is not running"

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Calls tool ``name``; a server that dies meanwhile ends the call at once with an error result."""
        client = self._client
        if client is None:
            raise ToolFailed(self.unavailable() or f"{self.label} is not running")
        call = asyncio.ensure_future(client.call_tool(name, arguments))
        gone = asyncio.ensure_future(self._gone.wait())
        try:
            await asyncio.wait((call, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await call
        if not call.done() or call.cancelled():
            raise ToolFailed(self.unavailable() or f"{self.label} went away during the call")
        try:
            result = call.result()
        except Exception as err:
            from mcp import MCPError

            if isinstance(err, MCPError) and "closed" in str(err).lower():
                self._died(_describe(err))
                raise ToolFailed(self.unavailable() or str(err)) from None
            raise
        text = result_text(result)
        if result.is_error:
            raise ToolFailed(text or f"the tool {name} failed on {self.label}")
        return text

    def tool(self, listed: Tool, name: str) -> SchemaTool:
        """``listed`` as a companion's tool called ``name``."""

        async def call(arguments: dict[str, Any]) -> str:
            return await self.call(listed.name, arguments)

        return SchemaTool(name, listed.description or listed.title or listed.name, listed.input_schema, call,
                          timeout=self.server.timeout_s, origin=f"mcp:{self.server.name}",
                          unavailable=self.unavailable)

    async def aclose(self) -> None:
        """Stops the session (and a stdio server's process) and waits for it."""
        if self.state != "failed":
            self.state = "stopped"
        self._stop.set()
        await self._tasks.aclose()


class McpTools:
    """The MCP servers of one companion. :meth:`start` adds their tools to the registry; every server that cannot
    start, every tool that cannot be added and every server that dies later goes to ``report``."""

    def __init__(self, servers: Sequence[McpServer], owner: str, report: Callable[[str], None], *,
                 ping_interval_s: float = PING_INTERVAL_S) -> None:
        self.owner = owner
        self.ping_interval_s = ping_interval_s
        self.report = report
        self.servers = list(servers)
        self.connections: list[McpConnection] = []
        self.tools: list[BaseTool] = []
        self._registry: ToolRegistry | None = None

    async def start(self, registry: ToolRegistry) -> None:
        if not self.servers or self.connections:
            return
        self._registry = registry
        self.connections = [McpConnection(s, self.owner, self.report, ping_interval_s=self.ping_interval_s)
                            for s in self.servers]
        outcomes = await asyncio.gather(*(c.start() for c in self.connections), return_exceptions=True)
        for connection, outcome in zip(self.connections, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if isinstance(outcome, asyncio.CancelledError):
                    raise outcome
                log.warning("%s: %s", self.owner, outcome)
                self.report(str(outcome))
                continue
            for listed in outcome:
                name = _tool_name(listed.name)
                if name in registry:
                    name = _tool_name(f"{connection.server.name}_{listed.name}")
                if name in registry:
                    self.report(f"{connection.label}: its tool {listed.name!r} clashes with another tool; left out")
                    continue
                try:
                    made = connection.tool(listed, name)
                except ValueError as err:
                    self.report(f"{connection.label}: {err}; left out")
                    continue
                registry.add(made)
                self.tools.append(made)
            log.info("%s: %s offers %s", self.owner, connection.label, ", ".join(t.name for t in outcome) or "no tools")

    async def aclose(self) -> None:
        """Closes every server and takes their tools out of the registry (a later :meth:`start` starts afresh)."""
        for connection in reversed(self.connections):
            await connection.aclose()
        if self._registry is not None:
            for made in self.tools:
                self._registry.remove(made.name)
        self.connections = []
        self.tools = []
