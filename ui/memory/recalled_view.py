"""What the companions recalled for each turn, under the Turns panel: per message answered, each companion's
recalled lines, notes and documents, dated, as its prompt got them (companions/memory/recall.py).

Everything shown comes from the bus (``MemoryRecalled``, published once per companion and message). Nothing here
searches.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from PySide6.QtWidgets import QWidget

from companions.memory.recall import MemoryRecalled, RecalledItem
from companions.wire.bus import Bus, BusItem
from ui.turns.followed_list import FollowedList
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.panel_ports import People

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


def _date(at: float | None, language: str | None = None) -> str:
    if at is None:
        return ""
    day = dt.datetime.fromtimestamp(at)
    return _text("date", language, year=day.year, month=day.month, day=day.day)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


class RecalledView(FollowedList):
    """The recalled items of the latest turns, newest last. :meth:`attach` after the runtime started."""

    def __init__(self, bus: Bus, people: People, parent: QWidget | None = None) -> None:
        super().__init__(bus, people, TEXTS, names=("turnsRecalledTitle", "turnsRecalled"), kept=LINES_KEPT,
                         parent=parent)
        self.list.setWordWrap(True)

    def on_item(self, item: BusItem) -> None:
        if isinstance(item, MemoryRecalled):
            self.show_recalled(item)

    def show_recalled(self, event: MemoryRecalled) -> None:
        """Adds one companion's recall for one message."""
        who = self.names.of(event.companion_id, in_sentence=True)
        if not event.items:
            self.add(_text("nothing", who=who))
        else:
            self.add(_text("heading", who=who, count=len(event.items)))
            for recalled in sorted(event.items, key=lambda i: (i.at is None, i.at or 0.0)):
                self.add(self._line(recalled), tip=recalled.text)
        self.added()

    def _line(self, item: RecalledItem) -> str:
        date = _date(item.at)
        if item.kind == "knowledge":
            return _text("knowledge", source=item.source.rsplit("/", 1)[-1], text=_short(item.text))
        if item.kind == "note":
            return _text("note", date=date, text=_short(item.text))
        speaker = self.names.of(item.speaker_id, in_sentence=True) if item.speaker_id else ""
        if speaker == item.speaker_id and item.speaker_name:
            speaker = item.speaker_name
        return _text("line", date=date, speaker=speaker, text=_short(item.text))
