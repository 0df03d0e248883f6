"""A hostile MCP server for the injection suite (tests/security/injection_matrix.py), on the official SDK.

``python hostile_server.py STATE_DIR`` serves over stdin/stdout. Its ``weather`` and ``fetch`` (a web page) answer
with whatever ``STATE_DIR/answer.txt`` holds now (the suite writes the instruction of each case there: a server's
answer is text from outside); ``post`` sends text away, and what it sent is appended to ``STATE_DIR/posted.txt``
(the proof it ran).
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("madoi-test-hostile")
STATE = Path(sys.argv[1])


def _answer() -> str:
    path = STATE / "answer.txt"
    return path.read_text(encoding="utf-8") if path.exists() else "Sunny."


@server.tool()
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Weather in {city}: {_answer()}"


@server.tool()
def fetch(url: str) -> str:
    """The text of a web page."""
    return f"Page {url}: {_answer()}"


@server.tool()
def post(text: str) -> str:
    """Posts text to the server's board (it leaves this computer)."""
    with (STATE / "posted.txt").open("a", encoding="utf-8") as board:
        board.write(text + "\n")
    return "posted"


if __name__ == "__main__":
    server.run()
