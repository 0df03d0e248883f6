"""A titled list of lines that follows the bus, newest last: what the Turns panel's tabs for the tools used
(ui/turns/tool_uses.py) and what memory recalled (ui/memory/recalled_view.py) have in common. Each says which bus items
become which lines (:meth:`FollowedList.on_item`); this keeps the list, its title in the window's language, the hint
while it is empty, and the number of lines kept."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from companions.wire.bus import Bus, BusItem
from ui.roster.display_names import DisplayNames
from ui.window.attached import AttachedWidget
from ui.window.i18n import Texts
from ui.window.naming import named
from ui.window.panel_ports import People

ERROR_COLOR = "#c0392b"


class FollowedList(AttachedWidget, QWidget):
    """The list; ``texts`` has its ``title`` and its ``none`` (the hint while empty); ``names`` are the Qt object
    names of the title and the list; at most ``kept`` lines stay. :meth:`attach` after the runtime started."""

    changed = Signal()  # a line was added

    def __init__(self, bus: Bus, people: People, texts: Texts, *, names: tuple[str, str], kept: int,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names = DisplayNames(people)
        self._texts = texts
        self._kept = kept
        self.title = named(QLabel(), names[0])
        self.list = named(QListWidget(), names[1])
        self.title.setBuddy(self.list)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list)
        self.follow_bus(bus, ("events",))
        self.retranslate()

    def retranslate(self) -> None:
        self.title.setText(self._texts.text("title"))
        self.list.setToolTip(self._texts.text("none") if self.list.count() == 0 else "")

    def lines(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def on_item(self, item: BusItem) -> None:
        """Turns a bus item into lines (:meth:`add`), or ignores it."""
        raise NotImplementedError

    def add(self, text: str, *, tip: str = "", error: bool = False) -> None:
        """Adds a line at the end (in red for an ``error``), keeps the newest ``kept``; call :meth:`added` after a
        group of lines."""
        line = QListWidgetItem(text)
        line.setToolTip(tip)
        if error:
            line.setForeground(QColor(ERROR_COLOR))
        self.list.addItem(line)
        while self.list.count() > self._kept:
            self.list.takeItem(0)

    def added(self) -> None:
        """Shows the newest lines and says the list changed."""
        self.list.scrollToBottom()
        self.list.setToolTip("")
        self.changed.emit()
