"""An MCP server written for Madoi's tests, on the official SDK (``MCPServer``, FastMCP's name in mcp 2).

``python lantern_server.py stdio`` serves over stdin/stdout; ``python lantern_server.py http`` binds a loopback
port chosen by the system, prints it on the first line of stdout, and serves streamable HTTP on ``/mcp``.
Its answers are made up, so a test can tell that they came from this server.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("madoi-test-lanterns")


@server.tool()
def lantern_colour(place: str) -> str:
    """The colour of the lanterns at a place.

    Args:
        place: Where the lanterns hang.
    """
    return f"The lanterns at {place} glow indigo (lantern registry no. 7431)."


@server.tool()
def count_lanterns(street: str, nights: int = 1) -> int:
    """How many lanterns a street lights over some nights."""
    return 12 * nights + len(street)


@server.tool()
def broken_lantern() -> str:
    """Always fails (a tool error the server words for its client)."""
    raise ToolError("the wick is wet")


@server.tool()
async def slow_lantern(seconds: float) -> str:
    """Answers after a while."""
    await asyncio.sleep(seconds)
    return "lit"


@server.tool()
def snuff_out() -> str:
    """Ends the server process at once (a crash)."""
    os._exit(3)


@server.tool()
def snuff_out_soon() -> str:
    """Answers, then ends the server process a moment later (a crash between calls)."""
    threading.Timer(0.2, os._exit, args=(3,)).start()
    return "the flame flickers"


async def _serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        asyncio.run(_serve_http())
    else:
        print("lantern server starting", file=sys.stderr, flush=True)
        server.run()
