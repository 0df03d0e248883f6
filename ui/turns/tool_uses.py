"""The tools the companions used, under the Turns panel: each call (who, which tool, from where, what came back)
and each tool source's trouble (an MCP server that failed or died, a plugin that did not load).

Everything shown comes from the bus: the worker's ``ToolUsed`` and the companions' ``ToolProblem``. Nothing here
runs a tool.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtWidgets import QWidget

from companions.tools.tool_use import ToolProblem, ToolUsed
from companions.wire.bus import Bus, BusItem
from ui.turns.followed_list import FollowedList
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.panel_ports import People

LINES_KEPT: Final = 100
TEXTS: Final = Texts("tool_uses", {
    "title": QT_TRANSLATE_NOOP("tool_uses", "Tools used"),
    "none": QT_TRANSLATE_NOOP("tool_uses", "No tool used yet."),
    "built-in": QT_TRANSLATE_NOOP("tool_uses", "built-in"),
    "mcp": QT_TRANSLATE_NOOP("tool_uses", "MCP server {name}"),
    "plugin": QT_TRANSLATE_NOOP("tool_uses", "plugin {name}"),
    "call": QT_TRANSLATE_NOOP("tool_uses", "{who} · {tool} ({origin}) → {result}"),
    "error": QT_TRANSLATE_NOOP("tool_uses", "{who} · {tool} ({origin}) failed: {result}"),
    "refused": QT_TRANSLATE_NOOP("tool_uses", "{who} · {tool} ({origin}) was not run: {result}"),
    "problem": QT_TRANSLATE_NOOP("tool_uses", "⚠ {text}"),
    # the built-in tools a person cares about, in words (the others by their names)
    "tool.vision": QT_TRANSLATE_NOOP("tool_uses", "the camera"),
    "tool.search": QT_TRANSLATE_NOOP("tool_uses", "search"),
})
# Built-in calls that are bookkeeping, not something done in the world: ``speak`` plans the line the chat shows
# anyway (its result, "Noted: you will say this...", is a note to the model). Shown only when refused or failing.
BOOKKEEPING: Final = frozenset({"speak"})


def _text(key: str, language: str | None = None, /, **values: object) -> str:
    return TEXTS.text(key, language, **values)


def origin_text(origin: str, language: str | None = None) -> str:
    """Where a tool comes from, in words: built-in, an MCP server by name, a plugin by name."""
    kind, _, name = origin.partition(":")
    if kind in ("mcp", "plugin") and name:
        return _text(kind, language, name=name)
    return _text("built-in", language) if origin == "built-in" else origin


class ToolUsesView(FollowedList):
    """The list of tool calls and tool problems, newest last. :meth:`attach` after the runtime started."""

    def __init__(self, bus: Bus, people: People, parent: QWidget | None = None) -> None:
        super().__init__(bus, people, TEXTS, names=("turnsToolsTitle", "turnsTools"), kept=LINES_KEPT,
                         parent=parent)

    def on_item(self, item: BusItem) -> None:
        if isinstance(item, ToolUsed):
            built_in = item.origin == "built-in"
            if built_in and item.tool in BOOKKEEPING and not item.is_error:
                return
            who = self.names.of(item.companion_id, in_sentence=True)
            key = "refused" if item.refused else "error" if item.is_error else "call"
            tool = _text(f"tool.{item.tool}") if built_in and f"tool.{item.tool}" in TEXTS \
                else item.tool
            self.add(_text(key, who=who, tool=tool, result=item.result, origin=origin_text(item.origin)),
                     error=item.is_error, tip=f"{item.tool}({item.arguments})\n{item.result}")
            self.added()
        elif isinstance(item, ToolProblem):
            self.add(_text("problem", text=item.text), error=True, tip=item.text)
            self.added()
