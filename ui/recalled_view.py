"""What the companions recalled for each turn, under the Turns panel: per message answered, each companion's
recalled lines, notes and documents, dated, as its prompt got them (companions/recall.py).

Everything shown comes from the bus (``MemoryRecalled``, published once per companion and message). Nothing here
searches.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from companions.bus import Bus, BusItem
from companions.recall import MemoryRecalled, RecalledItem
from ui.bus_bridge import BusFollower
from ui.i18n import QT_TRANSLATE_NOOP, Texts
from ui.naming import named
from ui.panel_ports import People
from ui.turns_wording import display_name

LINES_KEPT: Final = 120
SNIPPET_CHARS: Final = 90
TEXTS: Final = Texts("recalled", {
    "title": QT_TRANSLATE_NOOP("recalled", "Recalled from memory"),
    "none": QT_TRANSLATE_NOOP("recalled", "Nothing recalled yet: what a companion remembers from earlier "
                                          "conversations appears here, turn by turn."),
    "nothing": QT_TRANSLATE_NOOP("recalled", "{who} recalled nothing for this message."),
    "heading": QT_TRANSLATE_NOOP("recalled", "{who} recalled {count} for this message:"),
    "line": QT_TRANSLATE_NOOP("recalled", "    {date} · {speaker}: {text}"),
    "note": QT_TRANSLATE_NOOP("recalled", "    {date} · note: {text}"),
    "knowledge": QT_TRANSLATE_NOOP("recalled", "    from {source}: {text}"),
    "date": QT_TRANSLATE_NOOP("recalled", "{month}/{day}/{year}"),
})


def _text(key: str, language: str | None = None, /, **values: object) -> str:
    return TEXTS.text(key, language, **values)


def _date(at: float | None, language: str) -> str:
    if at is None:
        return ""
    day = dt.datetime.fromtimestamp(at)
    return _text("date", language, year=day.year, month=day.month, day=day.day)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


class RecalledView(QWidget):
    """The recalled items of the latest turns, newest last. :meth:`attach` after the runtime started."""

    changed = Signal()  # lines were added

    def __init__(self, bus: Bus, people: People, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.people = people
        self.language = language
        self.title = named(QLabel(), "turnsRecalledTitle")
        self.list = named(QListWidget(), "turnsRecalled")
        self.list.setWordWrap(True)
        self.title.setBuddy(self.list)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list)
        self._bus_link = BusFollower(bus, ("events",))
        self.set_language(language)

    def attach(self) -> None:
        self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        self._bus_link.stop()

    def set_language(self, language: str) -> None:
        self.language = language
        self.title.setText(_text("title", language))
        self.list.setToolTip(_text("none", language) if self.list.count() == 0 else "")

    def lines(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, MemoryRecalled):
            self.show_recalled(item)

    def show_recalled(self, event: MemoryRecalled) -> None:
        """Adds one companion's recall for one message."""
        who = display_name(self.people, self.language, event.companion_id)
        if not event.items:
            self._add(_text("nothing", self.language, who=who), "")
        else:
            self._add(_text("heading", self.language, who=who, count=len(event.items)), "")
            for recalled in sorted(event.items, key=lambda i: (i.at is None, i.at or 0.0)):
                self._add(self._line(recalled), recalled.text)
        self.list.scrollToBottom()
        self.list.setToolTip("")
        self.changed.emit()

    def _line(self, item: RecalledItem) -> str:
        date = _date(item.at, self.language)
        if item.kind == "knowledge":
            return _text("knowledge", self.language, source=item.source.rsplit("/", 1)[-1], text=_short(item.text))
        if item.kind == "note":
            return _text("note", self.language, date=date, text=_short(item.text))
        speaker = display_name(self.people, self.language, item.speaker_id) if item.speaker_id else ""
        if speaker == item.speaker_id and item.speaker_name:
            speaker = item.speaker_name
        return _text("line", self.language, date=date, speaker=speaker, text=_short(item.text))

    def _add(self, text: str, tip: str) -> None:
        line = QListWidgetItem(text)
        line.setToolTip(tip)
        self.list.addItem(line)
        while self.list.count() > LINES_KEPT:
            self.list.takeItem(0)
