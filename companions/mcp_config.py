"""Which MCP servers a companion uses: a card's ``mcp`` entries and the settings' servers for every companion.

A server is a local command spoken to over stdio (``command``, ``args``, ``env``, ``cwd``) or a streamable HTTP
endpoint (``url``). Kept apart from the client (``companions/mcp_tools.py``) so that reading cards and settings
never imports the MCP SDK.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class McpServer(BaseModel):
    """One MCP server. Its tools become the companion's tools (``tools`` keeps only the ones named)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,32}$", description="shown to the user; prefixes clashing tools")
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
