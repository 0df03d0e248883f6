"""The Turns panel's "earlier turns" list: one line per finished (or cancelled) turn, updated line by line.

A view that finishes a turn is kept (:meth:`TurnHistory.note`, for every view: a turn may finish between two
renders); :meth:`TurnHistory.sync` then changes only the lines that changed, adds the new ones and drops the oldest
beyond :data:`HISTORY_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtWidgets import QListWidget

from companions.conversation.readmodel import ConversationView

HISTORY_LIMIT: Final = 200  # turns listed under "earlier turns"


class TurnHistory:
    def __init__(self, widget: QListWidget, line: Callable[[ConversationView], str]) -> None:
        self.widget = widget
        self.line = line  # a finished turn's view -> its line (in the panel's language)
        self._views: dict[int, ConversationView] = {}  # turn number -> the view that finished it, in order
        self._rows: list[int] = []  # the turn number of each line of the list, top to bottom
        self._dirty: set[int] = set()  # turns whose line is new or changed since the list was updated

    def lines(self) -> list[str]:
        return [self.widget.item(i).text() for i in range(self.widget.count())]

    def note(self, view: ConversationView) -> None:
        """Keeps the view that finished (or cancelled) its turn; the list shows it at the next :meth:`sync`."""
        turn = view.turn
        if turn is None or turn.phase in ("voting", "composing", "waiting"):
            return
        self._views[turn.number] = view
        self._dirty.add(turn.number)
        if len(self._views) > HISTORY_LIMIT:
            del self._views[next(iter(self._views))]

    def clear(self) -> None:
        self._views.clear()
        self._rows.clear()
        self._dirty.clear()
        self.widget.clear()

    def sync(self) -> None:
        """Brings the list up to date with the turns kept: changed lines, new lines, trimmed ones."""
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        rows, kept = self._rows, list(self._views)
        trimmed = 0
        while trimmed < len(rows) and rows[trimmed] not in self._views:
            trimmed += 1
        if rows[trimmed:] != kept[:len(rows) - trimmed]:  # not the usual shape (oldest trimmed, newest added)
            self.rebuild()
            return
        for _ in range(trimmed):
            self.widget.takeItem(0)
        del rows[:trimmed]
        for row, number in enumerate(rows):
            if number in dirty:
                self.widget.item(row).setText(self.line(self._views[number]))
        added = kept[len(rows):]
        if added:
            self.widget.addItems([self.line(self._views[number]) for number in added])
            rows.extend(added)
            self.widget.scrollToBottom()

    def rebuild(self) -> None:
        self.widget.clear()
        self.widget.addItems([self.line(view) for view in self._views.values()])
        self._rows = list(self._views)
        self._dirty.clear()
        self.widget.scrollToBottom()
