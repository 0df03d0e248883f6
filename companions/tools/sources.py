"""A companion's tools beyond the built-in ones: plugin actions and knowledge (entry points) and MCP servers.

Plugins load when the companion is built; MCP servers start with the companion and close when it stops. Every
problem (a plugin that does not load, a server that cannot start or dies) is kept in ``problems``, published on
the bus as a :class:`~companions.tools.tool_use.ToolProblem` (the window shows it) and handed to ``report``; the
companion keeps its other tools.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from companions.cards.card import BUILTIN_ACTIONS, BUILTIN_KNOWLEDGE, CompanionCard
from companions.tools.functions import BaseTool, ToolRegistry
from companions.tools.mcp import McpTools
from companions.tools.mcp_config import McpServer, servers_for
from companions.tools.plugins import PluginContext, add_plugins
from companions.tools.tool_use import ToolProblem
from companions.wire.bus import Bus

log = logging.getLogger(__name__)


class ToolSources:
    """Plugins and MCP servers of one companion (``mcp_servers``: the settings' servers for every companion, then
    the card's own; a card's server never replaces a settings' one of the same name: companions/tools/mcp_config.py)."""

    def __init__(self, card: CompanionCard, registry: ToolRegistry, *, bus: Bus | None = None, language: str = "ja",
                 mcp_servers: Sequence[McpServer] = (), report: Callable[[str], None] | None = None) -> None:
        self.companion_id = card.id
        self.registry = registry
        self.bus = bus
        self.problems: list[str] = []
        self._report = report
        context = PluginContext(card.id, language)
        plugin_actions = [n for n in card.actions if n not in BUILTIN_ACTIONS]
        plugin_knowledge = [n for n in card.knowledge if n not in BUILTIN_KNOWLEDGE]
        self.plugin_tools: list[BaseTool] = [
            *add_plugins(registry, "actions", plugin_actions, context, self.report),
            *add_plugins(registry, "knowledge", plugin_knowledge, context, self.report),
        ]
        servers, renamed = servers_for(mcp_servers, card.mcp, card.id)  # the user's servers are never replaced
        self.mcp = McpTools(servers, card.id, self.report)
        for note in renamed:
            self.report(note)

    def report(self, problem: str) -> None:
        text = f"companion {self.companion_id}: {problem}"
        self.problems.append(text)
        if self.bus is not None:
            self.bus.publish(ToolProblem(self.companion_id, text))
        if self._report is not None:
            self._report(text)

    async def start(self) -> None:
        """Starts the MCP servers and adds their tools (those that cannot start are reported)."""
        await self.mcp.start(self.registry)

    async def aclose(self) -> None:
        await self.mcp.aclose()
