"""The Memory view: what each companion remembers of earlier conversations, and the user's say over it.

A dialog (the Madoi menu's "Memory…"): a companion, the switch that lets it recall earlier conversations in new ones
(a setting, saved at once), what it remembers (newest first, dated, who said it; a search field filters it), and
"Forget" for the selected lines or everything it remembers (after asking). Forgetting is immediate (the port,
``ui.window.panel_ports.MemoryAccess``: app/memory/access.py); the list is read again after each change.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Coroutine, Sequence
from typing import Any, Final

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from companions.common.tasks import TaskSet
from companions.memory.context import HeardLine
from companions.memory.notes import Note
from ui.roster.display_names import DisplayNames
from ui.window.attached import Retranslating
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named
from ui.window.panel_ports import MemoryAccess, People

SHOWN: Final = 300  # lines listed at most (the newest; the search field finds older ones)
FILTER_DELAY_MS: Final = 250
ID_ROLE: Final = Qt.ItemDataRole.UserRole
TEXTS: Final = Texts("memory_view", {
    "menu": QT_TRANSLATE_NOOP("memory_view", "&Memory…"),
    "title": QT_TRANSLATE_NOOP("memory_view", "What the companions remember"),
    "companion": QT_TRANSLATE_NOOP("memory_view", "&Companion:"),
    "switch": QT_TRANSLATE_NOOP("memory_view", "&Remember earlier conversations (recall them in new ones)"),
    "search": QT_TRANSLATE_NOOP("memory_view", "&Search:"),
    "search.hint": QT_TRANSLATE_NOOP("memory_view", "words in what was said"),
    "count": QT_TRANSLATE_NOOP("memory_view", "{name} remembers {count} lines."),
    "count.shown": QT_TRANSLATE_NOOP("memory_view", "{name} remembers {count} lines; the newest {shown} are listed."),
    "count.found": QT_TRANSLATE_NOOP("memory_view", "{found} of the {count} lines {name} remembers hold these words."),
    "empty": QT_TRANSLATE_NOOP("memory_view", "{name} remembers nothing yet."),
    "off": QT_TRANSLATE_NOOP("memory_view", "Off: {name} recalls nothing from earlier conversations (what it "
                                            "remembers stays until you forget it)."),
    "line": QT_TRANSLATE_NOOP("memory_view", "{date} · {speaker}: {text}"),
    "note": QT_TRANSLATE_NOOP("memory_view", "{date} · note: {text}"),
    "date": QT_TRANSLATE_NOOP("memory_view", "{month}/{day}/{year} {hour}:{minute}"),
    "forget": QT_TRANSLATE_NOOP("memory_view", "&Forget selected"),
    "forget.all": QT_TRANSLATE_NOOP("memory_view", "Forget &everything…"),
    "confirm.title": QT_TRANSLATE_NOOP("memory_view", "Forget everything?"),
    "confirm.text": QT_TRANSLATE_NOOP("memory_view", "{name} will forget all {count} lines it remembers, for good. "
                                                     "Your conversations stay in the list."),
    "forgotten": QT_TRANSLATE_NOOP("memory_view", "{name} forgot {count} lines."),
    "failed": QT_TRANSLATE_NOOP("memory_view", "Memory could not be read or changed: {error}"),
})


def _text(key: str, language: str | None = None, /, **values: object) -> str:
    return TEXTS.text(key, language, **values)


class MemoryView(Retranslating, QDialog):
    """One dialog for every companion of the app (chosen at the top)."""

    loaded = Signal()  # the list was filled (tests and the screenshot wait on it)
    confirmation_shown = Signal(QMessageBox)  # "Forget everything?" is asked

    def __init__(self, memory: MemoryAccess, people: People, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "memoryView")
        self.memory = memory
        self.people = people
        self.names = DisplayNames(people)
        self._tasks = TaskSet("memory-view")
        self.companion = named(QComboBox(), "memoryCompanion")
        for companion_id in people.companion_ids():
            self.companion.addItem(self.names.of(companion_id), companion_id)
        self.switch = named(QCheckBox(), "memorySwitch")
        self.search = named(QLineEdit(), "memorySearch")
        self.search.setClearButtonEnabled(True)
        self.lines = named(QListWidget(), "memoryLines")
        self.lines.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.lines.setWordWrap(True)
        self.summary = named(QLabel(), "memorySummary")
        self.summary.setWordWrap(True)
        self.forget_button = named(QPushButton(), "memoryForget")
        self.forget_all_button = named(QPushButton(), "memoryForgetAll")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.companion_label, self.search_label = QLabel(), QLabel()
        self.companion_label.setBuddy(self.companion)
        self.search_label.setBuddy(self.search)

        top = QHBoxLayout()
        top.addWidget(self.companion_label)
        top.addWidget(self.companion, 1)
        search_row = QHBoxLayout()
        search_row.addWidget(self.search_label)
        search_row.addWidget(self.search, 1)
        actions = QHBoxLayout()
        actions.addWidget(self.forget_button)
        actions.addWidget(self.forget_all_button)
        actions.addStretch(1)
        actions.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.switch)
        layout.addLayout(search_row)
        layout.addWidget(self.lines, 1)
        layout.addWidget(self.summary)
        layout.addLayout(actions)
        self.resize(640, 480)

        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(self._search_typed)
        self.companion.currentIndexChanged.connect(self._companion_chosen)
        self.switch.toggled.connect(self._switched)
        self.lines.itemSelectionChanged.connect(self._update_buttons)
        self.forget_button.clicked.connect(self.forget_selected)
        self.forget_all_button.clicked.connect(self.forget_everything)
        self._count = 0
        self._name_controls()

    # -- state -----------------------------------------------------------------------------------------------
    def companion_id(self) -> str | None:
        value = self.companion.currentData()
        return str(value) if value is not None else None

    def shown_lines(self) -> list[str]:
        return [self.lines.item(i).text() for i in range(self.lines.count())]

    def retranslate(self) -> None:
        self._name_controls()
        for index in range(self.companion.count()):
            self.companion.setItemText(index, self.names.of(str(self.companion.itemData(index))))
        self.refresh()  # the summary and the lines' dates, in the new language

    def _search_typed(self, _text: str) -> None:
        self._filter_timer.start()  # the lines are filtered once the typing pauses

    def _companion_chosen(self, _index: int) -> None:
        self.refresh()

    def _name_controls(self) -> None:
        self.setWindowTitle(_text("title"))
        self.companion_label.setText(_text("companion"))
        self.switch.setText(_text("switch"))
        self.search_label.setText(_text("search"))
        self.search.setPlaceholderText(_text("search.hint"))
        self.forget_button.setText(_text("forget"))
        self.forget_all_button.setText(_text("forget.all"))

    def _name(self) -> str:
        companion_id = self.companion_id()
        return self.names.of(companion_id, in_sentence=True) if companion_id else ""

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return self._tasks.spawn(self._reporting(coro), name="memory-view")

    async def _reporting(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            await coro
        except Exception as exc:  # the user sees what went wrong, never a traceback
            self.summary.setText(_text("failed", error=exc))

    # -- loading ---------------------------------------------------------------------------------------------
    def refresh(self) -> asyncio.Task[None]:
        """Reads again what the chosen companion remembers (filtered by the search field)."""
        return self._spawn(self._load())

    async def _load(self) -> None:
        companion_id = self.companion_id()
        if companion_id is None:
            self.lines.clear()
            self.summary.setText("")
            self.loaded.emit()
            return
        words = self.search.text().strip()
        lines = await self.memory.remembered(companion_id, words, SHOWN)
        notes = [(i, n) for i, n in await self.memory.notes(companion_id) if words.lower() in n.text.lower()]
        self._count = await self.memory.count(companion_id)
        if companion_id != self.companion_id() or words != self.search.text().strip():
            return  # the user chose another companion or typed on: that load shows instead
        self.switch.blockSignals(True)
        self.switch.setChecked(self.memory.enabled(companion_id))
        self.switch.blockSignals(False)
        self._fill(lines, notes)
        name = self._name()
        if not self.memory.enabled(companion_id):
            summary = _text("off", name=name)
        elif self._count == 0:
            summary = _text("empty", name=name)
        elif words:
            summary = _text("count.found", found=len(lines), count=self._count, name=name)
        elif self._count > len(lines):
            summary = _text("count.shown", count=self._count, shown=len(lines), name=name)
        else:
            summary = _text("count", count=self._count, name=name)
        self.summary.setText(summary)
        self._update_buttons()
        self.loaded.emit()

    def _fill(self, lines: Sequence[HeardLine], notes: Sequence[tuple[int, Note]]) -> None:
        self.lines.clear()
        said = {line.entry.message_id: line.entry.text for line in lines}
        for note_id, note in notes:  # first: what it noted about the user, with the lines it came from
            item = QListWidgetItem(_text("note", date=self._date(note.at), text=note.text))
            item.setData(ID_ROLE, f"note:{note_id}")
            item.setToolTip("\n".join(said.get(s, s) for s in note.sources))
            self.lines.addItem(item)
        for line in lines:
            entry = line.entry
            date = self._date(entry.at)
            speaker = self.names.of(entry.speaker_id, in_sentence=True)
            if speaker == entry.speaker_id and entry.speaker_name:
                speaker = entry.speaker_name
            item = QListWidgetItem(_text("line", date=date, speaker=speaker, text=entry.text))
            item.setData(ID_ROLE, entry.message_id)
            item.setToolTip(entry.text)
            self.lines.addItem(item)

    def _date(self, at: float) -> str:
        when = dt.datetime.fromtimestamp(at)
        return _text("date", year=when.year, month=when.month, day=when.day, hour=when.hour,
                     minute=f"{when.minute:02d}")

    def _update_buttons(self) -> None:
        self.forget_button.setEnabled(bool(self.lines.selectedItems()))
        self.forget_all_button.setEnabled(self._count > 0)

    # -- commands --------------------------------------------------------------------------------------------
    def _switched(self, on: bool) -> None:
        companion_id = self.companion_id()
        if companion_id is None:
            return
        self.memory.set_enabled(companion_id, on)
        self.refresh()

    def forget_selected(self) -> asyncio.Task[None] | None:
        companion_id = self.companion_id()
        ids = [str(item.data(ID_ROLE)) for item in self.lines.selectedItems()]
        if companion_id is None or not ids:
            return None
        return self._spawn(self._forget(companion_id, ids))

    async def _forget(self, companion_id: str, ids: list[str] | None) -> None:
        before = self._count
        if ids is None:
            await self.memory.forget_all(companion_id)
        else:
            await self.memory.forget(companion_id, ids)
        await self._load()
        self.summary.setText(_text("forgotten", name=self._name(), count=before - self._count)
                             + " " + self.summary.text())

    def forget_everything(self) -> QMessageBox | None:
        """Asks first (the box is returned, and announced by ``confirmation_shown``); *Yes* forgets every line the
        chosen companion remembers."""
        companion_id = self.companion_id()
        if companion_id is None:
            return None
        box = QMessageBox(QMessageBox.Icon.Question, _text("confirm.title"),
                          _text("confirm.text", name=self._name(), count=self._count),
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setDefaultButton(QMessageBox.StandardButton.No)

        def answered(_result: int) -> None:
            if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes:
                self._spawn(self._forget(companion_id, None))

        box.finished.connect(answered)
        box.open()
        self.confirmation_shown.emit(box)
        return box

    def done(self, result: int) -> None:
        self._tasks.cancel()
        super().done(result)


class MemoryEntry(QObject):
    """The Madoi menu's "Memory…" (placed before ``menu_anchor``), opening one :class:`MemoryView` at a time."""

    def __init__(self, window: QMainWindow, memory: MemoryAccess, people: People, menu_anchor: QAction) -> None:
        super().__init__(window)
        self.window = window
        self.memory = memory
        self.people = people
        self.view: MemoryView | None = None
        self.action = named(QAction(_text("menu"), window), "memoryAction")
        self.action.triggered.connect(self.open)
        menu = next((m for m in window.menuBar().findChildren(QMenu) if menu_anchor in m.actions()), None)
        if menu is not None:
            menu.insertAction(menu_anchor, self.action)
        window.addAction(self.action)

    def retranslate(self) -> None:
        """The menu entry's words again (the window calls it on LanguageChange; an open view follows by itself)."""
        self.action.setText(_text("menu"))

    def _view_closed(self, _result: int) -> None:
        self.view = None

    def open(self) -> MemoryView:
        if self.view is None or not self.view.isVisible():
            self.view = MemoryView(self.memory, self.people, self.window)
            self.view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            self.view.finished.connect(self._view_closed)
            self.view.show()
            self.view.refresh()
        self.view.raise_()
        self.view.activateWindow()
        return self.view
