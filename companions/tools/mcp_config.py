"""Which MCP servers a companion uses: a card's ``mcp`` entries and the settings' servers for every companion.

A server is a local command spoken to over stdio (``command``, ``args``, ``env``, ``cwd``) or a streamable HTTP
endpoint (``url``). Kept apart from the client (``companions/tools/mcp.py``) so that reading cards and settings
never imports the MCP SDK.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")


class McpServer(BaseModel):
    """One MCP server. Its tools become the companion's tools (``tools`` keeps only the ones named)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=rf"^{_NAME.pattern}$", description="shown to the user; prefixes clashing tools")
    command: str | None = Field(default=None, min_length=1, description="the program that serves over stdio")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="added to a small default environment")
    cwd: str | None = None
    url: str | None = Field(default=None, description="a streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    tools: list[str] | None = Field(default=None, description="only these tools of the server (all when unset)")
    timeout_s: float = Field(default=60.0, gt=0, le=600, description="one tool call's limit")
    start_timeout_s: float = Field(default=30.0, gt=0, le=300, description="starting and listing the tools")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if self.command is None and self.url is None:
            raise ValueError("an MCP server needs 'command' (stdio) or 'url' (streamable HTTP)")
        if self.command is not None and self.url is not None:
            raise ValueError("an MCP server has 'command' (stdio) or 'url' (streamable HTTP), not both")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("an MCP server's url must start with http:// or https://")
        return self

    @property
    def where(self) -> str:
        """The server as the user wrote it: its command line or its URL."""
        return self.url if self.url is not None else " ".join([self.command or "", *self.args])


def servers_for(user: Sequence[McpServer], card: Sequence[McpServer],
                card_id: str) -> tuple[list[McpServer], list[str]]:
    """A companion's servers: the user's own (the settings' ``[[mcp.servers]]``), then its card's.

    A card never replaces one of the user's servers: a card's server named like one of them runs under the name
    ``<card id>-<name>`` instead (its tools then carry that prefix when they clash), or is left out when that name
    is taken too. Returns the servers and a sentence for each one renamed or left out."""
    servers = {s.name: s for s in user}
    notes: list[str] = []
    for server in card:
        if server.name not in servers:
            servers[server.name] = server
            continue
        renamed = f"{card_id}-{server.name}"[:32]
        if not _NAME.fullmatch(renamed) or renamed in servers or any(s.name == renamed for s in card):
            notes.append(f"the card's MCP server {server.name!r} has the name of one of your servers: yours is "
                         "kept and the card's is left out")
            continue
        servers[renamed] = server.model_copy(update={"name": renamed})
        notes.append(f"the card's MCP server {server.name!r} has the name of one of your servers: yours is kept "
                     f"and the card's runs as {renamed!r}")
    return list(servers.values()), notes
