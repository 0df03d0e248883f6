"""The tools the companions used, under the Turns panel: each call (who, which tool, from where, what came back)
and each tool source's trouble (an MCP server that failed or died, a plugin that did not load).

Everything shown comes from the bus: the worker's ``ToolUsed`` (kept by the core's ``ToolUseLog`` read model) and
the companions' ``ToolProblem``. Nothing here runs a tool.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from companions.bus import Bus, BusItem
from companions.tool_use import ToolProblem, ToolUsed, ToolUseLog
from ui.bus_bridge import BusFollower
from ui.display_names import DisplayNames
from ui.i18n import QT_TRANSLATE_NOOP, Texts, is_language_change
from ui.naming import named
from ui.panel_ports import People

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


class ToolUsesView(QWidget):
    """The list of tool calls and tool problems, newest last. :meth:`attach` after the runtime started."""

    changed = Signal()  # a line was added

    def __init__(self, bus: Bus, people: People, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names = DisplayNames(people)
        self.log = ToolUseLog()
        self.title = named(QLabel(), "turnsToolsTitle")
        self.list = named(QListWidget(), "turnsTools")
        self.title.setBuddy(self.list)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list)
        self._bus_link = BusFollower(bus, ("events",))
        self.retranslate()

    def attach(self) -> None:
        self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        self._bus_link.stop()

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.title.setText(_text("title"))
        self.list.setToolTip(_text("none") if self.list.count() == 0 else "")

    def lines(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, ToolUsed):
            self.log.apply(item)
            built_in = item.origin == "built-in"
            if built_in and item.tool in BOOKKEEPING and not item.is_error:
                return
            who = self.names.of(item.companion_id, in_sentence=True)
            key = "refused" if item.refused else "error" if item.is_error else "call"
            tool = _text(f"tool.{item.tool}") if built_in and f"tool.{item.tool}" in TEXTS \
                else item.tool
            self._add(_text(key, who=who, tool=tool, result=item.result,
                            origin=origin_text(item.origin)), error=item.is_error,
                      tip=f"{item.tool}({item.arguments})\n{item.result}")
        elif isinstance(item, ToolProblem):
            self._add(_text("problem", text=item.text), error=True, tip=item.text)

    def _add(self, text: str, *, error: bool, tip: str) -> None:
        line = QListWidgetItem(text)
        line.setToolTip(tip)
        if error:
            line.setForeground(QColor("#c0392b"))
        self.list.addItem(line)
        while self.list.count() > LINES_KEPT:
            self.list.takeItem(0)
        self.list.scrollToBottom()
        self.list.setToolTip("")
        self.changed.emit()
