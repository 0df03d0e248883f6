"""A plugin package for Madoi's tests: an action and a knowledge source offered through entry points
(``madoi_lantern_plugin-0.1.dist-info/entry_points.txt``)."""

from __future__ import annotations

from companions.tools.functions import BaseTool, tool
from companions.tools.plugins import PluginContext

NOT_TOOLS = {"just": "a dict"}


@tool
async def light_lantern(colour: str) -> str:
    """Light a paper lantern of a colour for everyone to see.

    Args:
        colour: The lantern's colour.
    """
    return f"A {colour} lantern now glows by the door (lit by the lantern plugin)."


def lantern_lore(context: PluginContext) -> list[BaseTool]:
    """A factory: the knowledge tool knows which companion it serves."""

    @tool
    async def lantern_lore(topic: str) -> str:
        """Old stories about lanterns."""
        return f"{context.companion_id} recalls: the first {topic} lantern was lit in 1183."

    return [lantern_lore]
