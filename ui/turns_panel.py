"""The turn-taking view: the current turn's votes, who takes the floor and why, closing progress, how it ended.

Everything shown comes from conversation control's read model (``ConversationChanged`` on the bus ``events``
topic); the buttons are commands on the bus (mute / unmute and "speak next" for the chosen row, interrupt, stop).
Nothing here decides anything: the selection rule, the end reason and the closing stage are values of the read
model, put into the user's language.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.runtime import ActiveConversationChanged, Runtime
from companions.bus import BusItem
from companions.conversation.control import (
    ForceNextSpeaker,
    InterruptConversation,
    MuteCompanion,
    StopConversation,
)
from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView, VoteView
from companions.protocol import CLOSING_ORDER
from ui.bus_bridge import BusSignals
from ui.companion_colors import companion_color
from ui.naming import named
from ui.turns_texts import turns_text
from ui.turns_wording import TurnsWording, display_name

COMPANION_ROLE: Final = Qt.ItemDataRole.UserRole
IMPORTANCE_ROLE: Final = Qt.ItemDataRole.UserRole + 1
COLUMNS: Final = ("companion", "vote", "importance", "selected", "closing", "reason")
HISTORY_LIMIT: Final = 200  # turns listed under "earlier turns"


@dataclass(frozen=True)
class VoteRow:
    """One row of the votes table as the user reads it."""

    companion: str
    name: str
    vote: str
    importance: str
    selected: str
    closing: str
    reason: str
    speaker: bool  # marked as the one who takes the floor this turn


class ImportanceDelegate(QStyledItemDelegate):
    """Draws the importance (0-10) as a bar in the companion's colour behind the number."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        value = index.data(IMPORTANCE_ROLE)
        if isinstance(value, int):
            rect = QRectF(option.rect).adjusted(3, 4, -3, -4)
            color = QColor(companion_color(str(index.data(COMPANION_ROLE))))
            color.setAlpha(90)
            painter.save()
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(color)
            painter.drawRoundedRect(QRectF(rect.x(), rect.y(), rect.width() * value / 10, rect.height()), 3, 3)
            painter.restore()
        super().paint(painter, option, index)


class TurnsPanel(QWidget):
    """The turn-taking view of one runtime. Call :meth:`attach` once the runtime started, :meth:`detach` before
    it stops."""

    rendered = Signal(int)  # the revision of the conversation view just shown

    def __init__(self, runtime: Runtime, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runtime = runtime
        self.language = language
        self.status = named(QLabel(), "turnsStatus")
        self.closing_title = named(QLabel(), "closingTitle")
        self.closing_steps = [named(QLabel(), f"closingStage-{stage}") for stage in CLOSING_ORDER]
        self.turn_label = named(QLabel(), "turnsTurn")
        self.floor = named(QLabel(), "turnsFloor")
        self.floor.setWordWrap(True)
        self.speaking = named(QLabel(), "turnsSpeaking")
        self.next_up = named(QLabel(), "turnsNext")
        self.votes = named(QTableWidget(0, len(COLUMNS)), "turnsVotes")
        self.votes.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.votes.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.votes.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.votes.setTabKeyNavigation(False)  # Tab leaves the table for the buttons
        self.votes.verticalHeader().setVisible(False)
        self.votes.setItemDelegateForColumn(COLUMNS.index("importance"), ImportanceDelegate(self.votes))
        header = self.votes.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.votes.itemSelectionChanged.connect(self._update_buttons)
        self.ended = named(QLabel(), "turnsEnded")
        self.ended.setWordWrap(True)
        ended_font = self.ended.font()
        ended_font.setBold(True)
        self.ended.setFont(ended_font)
        self.mute_button = named(QPushButton(), "turnsMute")
        self.mute_button.clicked.connect(self._toggle_mute)
        self.next_button = named(QPushButton(), "turnsSpeakNext")
        self.next_button.clicked.connect(self._speak_next)
        self.interrupt_button = named(QPushButton(), "turnsInterrupt")
        self.interrupt_button.clicked.connect(self.interrupt)
        self.stop_button = named(QPushButton(), "turnsStop")
        self.stop_button.clicked.connect(self.stop)
        self.history_title = named(QLabel(), "turnsHistoryTitle")
        self.history = named(QListWidget(), "turnsHistory")
        self.history_title.setBuddy(self.history)

        steps = QHBoxLayout()
        steps.addWidget(self.closing_title)
        for i, step in enumerate(self.closing_steps):
            if i:
                steps.addWidget(QLabel("→"))
            steps.addWidget(step)
        steps.addStretch(1)
        companion_buttons = QHBoxLayout()
        companion_buttons.addWidget(self.mute_button)
        companion_buttons.addWidget(self.next_button)
        companion_buttons.addStretch(1)
        companion_buttons.addWidget(self.interrupt_button)
        companion_buttons.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.ended)
        layout.addLayout(steps)
        layout.addWidget(self.turn_label)
        layout.addWidget(self.floor)
        layout.addWidget(self.speaking)
        layout.addWidget(self.next_up)
        layout.addWidget(self.votes, 2)
        layout.addLayout(companion_buttons)
        layout.addWidget(self.history_title)
        layout.addWidget(self.history, 1)
        self.setTabOrder(self.votes, self.mute_button)
        self.setTabOrder(self.mute_button, self.next_button)
        self.setTabOrder(self.next_button, self.interrupt_button)
        self.setTabOrder(self.interrupt_button, self.stop_button)
        self.setTabOrder(self.stop_button, self.history)

        self.view = ConversationView()
        self._signals: BusSignals | None = None
        self._history: dict[int, ConversationView] = {}  # turn number -> the view that finished it, in order
        self._row_keys: dict[int, tuple[object, ...]] = {}  # what each table row shows now (unchanged: skipped)
        self._closing_shown: str | None = None
        self._words = TurnsWording(language, functools.partial(display_name, runtime, language))
        self._retranslate()
        self._render()

    # -- lifecycle -------------------------------------------------------------------------------------------
    def attach(self) -> None:
        """Shows the conversation's current state and follows the bus (call after ``runtime.start()``)."""
        if self.runtime.conversation is not None:
            self.view = self.runtime.conversation.view
        self._render()
        if self._signals is None:
            self._signals = BusSignals(self.runtime.bus, ("events",), self)
            self._signals.item.connect(self._on_item)

    def detach(self) -> None:
        """Stops following the bus (call before the runtime stops or the widget goes)."""
        if self._signals is not None:
            self._signals.close()
            self._signals = None

    def set_language(self, language: str) -> None:
        self.language = language
        self._words = TurnsWording(language, functools.partial(display_name, self.runtime, language))
        self._retranslate()
        self._row_keys.clear()
        self._closing_shown = None
        self._rebuild_history()
        self._render()

    # -- commands --------------------------------------------------------------------------------------------
    def set_muted(self, companion_id: str, muted: bool) -> None:
        self.runtime.bus.publish(MuteCompanion(companion_id, muted))

    def speak_next(self, companion_id: str) -> None:
        self.runtime.bus.publish(ForceNextSpeaker(companion_id))

    def interrupt(self) -> None:
        """Cuts in: the speech and the thinking in progress stop, and the companions wait for the user."""
        self.runtime.bus.publish(InterruptConversation())

    def stop(self) -> None:
        self.runtime.bus.publish(StopConversation())

    def chosen(self) -> str | None:
        """The companion of the selected row (the mute and speak-next buttons act on it)."""
        rows = self.votes.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.votes.item(rows[0].row(), 0)
        return str(item.data(COMPANION_ROLE)) if item is not None else None

    def choose(self, companion_id: str) -> None:
        for row in range(self.votes.rowCount()):
            item = self.votes.item(row, 0)
            if item is not None and item.data(COMPANION_ROLE) == companion_id:
                self.votes.selectRow(row)
                return

    def _toggle_mute(self) -> None:
        companion = self.chosen()
        if companion is not None:
            self.set_muted(companion, companion not in self.view.muted)

    def _speak_next(self) -> None:
        companion = self.chosen()
        if companion is not None:
            self.speak_next(companion)

    # -- what the user sees ----------------------------------------------------------------------------------
    def rows(self) -> list[VoteRow]:
        result = []
        for row in range(self.votes.rowCount()):
            cells = [self.votes.item(row, column) for column in range(len(COLUMNS))]
            texts = [cell.text() if cell is not None else "" for cell in cells]
            first = cells[0]
            name, vote, importance, selected, closing, reason = texts
            result.append(VoteRow(str(first.data(COMPANION_ROLE)) if first is not None else "", name, vote,
                                  importance, selected, closing, reason,
                                  speaker=first is not None and first.font().bold()))
        return result

    def row_of(self, companion_id: str) -> VoteRow | None:
        return next((r for r in self.rows() if r.companion == companion_id), None)

    def closing_stage(self) -> str:
        """The closing stage shown as current."""
        return str(self.view.closing)

    def history_lines(self) -> list[str]:
        return [self.history.item(i).text() for i in range(self.history.count())]

    # -- the bus ---------------------------------------------------------------------------------------------
    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, ConversationChanged):
            if item.view.revision > self.view.revision:
                self.view = item.view
                self._render()
        elif isinstance(item, ActiveConversationChanged):
            self._history.clear()
            self.history.clear()

    # -- rendering -------------------------------------------------------------------------------------------
    def _render(self) -> None:
        view, turn = self.view, self.view.turn
        self.status.setText(turns_text(f"status.{view.status}", self.language))
        self._render_closing(view)
        if turn is None:
            self.turn_label.setText(turns_text("turn.none", self.language))
        else:
            self.turn_label.setText(turns_text("turn", self.language, n=turn.number, who=self._name(turn.opened_by),
                                               phase=turns_text(f"phase.{turn.phase}", self.language)))
        self.floor.setText(self._words.floor(turn))
        self.speaking.setText(turns_text("floor.now", self.language, who=self._name(view.floor))
                              if view.floor is not None else turns_text("floor.silent", self.language))
        self.next_up.setVisible(view.forced_next is not None)
        if view.forced_next is not None:
            self.next_up.setText(turns_text("floor.next", self.language, who=self._name(view.forced_next)))
        self._render_votes(view, turn)
        self.ended.setVisible(view.status == "ended")
        if view.status == "ended":
            self.ended.setText(turns_text("ended", self.language, reason=self._words.ended(view)))
            self.ended.setToolTip(view.ended_detail)
        self._render_history(view)
        self._update_buttons()
        self.rendered.emit(view.revision)

    def _render_closing(self, view: ConversationView) -> None:
        if view.closing == self._closing_shown:
            return
        self._closing_shown = view.closing
        current = CLOSING_ORDER.index(view.closing)
        for i, (stage, label) in enumerate(zip(CLOSING_ORDER, self.closing_steps, strict=True)):
            label.setText(turns_text(f"closing.{stage}", self.language))
            font = label.font()
            font.setBold(i == current)
            label.setFont(font)
            label.setEnabled(i <= current)
            label.setStyleSheet("" if i <= current else "color: palette(mid);")  # not reached yet: greyed out
        words = turns_text(f"closing.{view.closing}", self.language)
        self.closing_title.setAccessibleDescription(words)

    def _render_votes(self, view: ConversationView, turn: TurnView | None) -> None:
        chosen = self.chosen()
        ids = self._companions(view, turn.votes if turn is not None else ())
        if self.votes.rowCount() != len(ids):
            self.votes.setRowCount(len(ids))
            self._row_keys.clear()
        for row, companion in enumerate(ids):
            vote = turn.vote_of(companion) if turn is not None else None
            speaker = turn is not None and turn.speaker == companion
            muted = companion in view.muted
            key = (companion, vote, muted, speaker)
            if self._row_keys.get(row) != key:  # a view changes one or two rows: the others stay as they are
                self._row_keys[row] = key
                self._set_row(row, companion, vote, muted=muted, speaker=speaker)
        if chosen is not None:
            self.choose(chosen)

    def _set_row(self, row: int, companion: str, vote: VoteView | None, *, muted: bool, speaker: bool) -> None:
        name = self._name(companion)
        texts, importance = self._words.vote_cells(vote, muted=muted)
        color = companion_color(companion)
        for column, text in enumerate([f"▶ {name}" if speaker else name, *texts]):
            item = self.votes.item(row, column)
            if item is None:
                item = QTableWidgetItem()
                self.votes.setItem(row, column, item)
            item.setText(text)
            item.setData(COMPANION_ROLE, companion)
            item.setToolTip(text if column == COLUMNS.index("reason") else "")
            font = QFont(self.votes.font())
            font.setBold(speaker)
            item.setFont(font)
            background = QColor(color)
            background.setAlpha(45)
            item.setData(Qt.ItemDataRole.BackgroundRole, background if speaker else None)
        name_item = self.votes.item(row, 0)
        assert name_item is not None
        name_item.setForeground(color)
        importance_item = self.votes.item(row, COLUMNS.index("importance"))
        assert importance_item is not None
        importance_item.setData(IMPORTANCE_ROLE, importance)
        importance_item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)

    def _render_history(self, view: ConversationView) -> None:
        turn = view.turn
        if turn is None or turn.phase in ("voting", "composing", "waiting"):
            return
        known = turn.number in self._history
        self._history[turn.number] = view
        if known:
            row = list(self._history).index(turn.number)
            self.history.item(row).setText(self._words.history_line(view))
            return
        if len(self._history) > HISTORY_LIMIT:
            del self._history[next(iter(self._history))]
            self.history.takeItem(0)
        self.history.addItem(self._words.history_line(view))
        self.history.scrollToBottom()

    def _rebuild_history(self) -> None:
        self.history.clear()
        self.history.addItems([self._words.history_line(view) for view in self._history.values()])
        self.history.scrollToBottom()

    def _retranslate(self) -> None:
        self.closing_title.setText(turns_text("closing.label", self.language))
        self.votes.setHorizontalHeaderLabels([turns_text(f"column.{c}", self.language) for c in COLUMNS])
        self.votes.setAccessibleName(turns_text("turns.title", self.language))
        self.next_button.setText(turns_text("speak_next", self.language))
        self.next_button.setToolTip(turns_text("speak_next.tooltip", self.language))
        self.mute_button.setToolTip(turns_text("mute.tooltip", self.language))
        self.interrupt_button.setText(turns_text("interrupt", self.language))
        self.interrupt_button.setToolTip(turns_text("interrupt.tooltip", self.language))
        self.stop_button.setText(turns_text("stop", self.language))
        self.stop_button.setToolTip(turns_text("stop.tooltip", self.language))
        self.history_title.setText(turns_text("history.title", self.language))

    def _update_buttons(self) -> None:
        view = self.view
        companion = self.chosen()
        present = companion is not None and companion in view.present
        muted = companion is not None and companion in view.muted
        self.mute_button.setText(turns_text("unmute" if muted else "mute", self.language))
        self.mute_button.setEnabled(present)
        self.next_button.setEnabled(present and not muted)
        running = view.status == "running"
        self.interrupt_button.setEnabled(running)
        self.stop_button.setEnabled(running)

    # -- helpers ---------------------------------------------------------------------------------------------
    def _companions(self, view: ConversationView, votes: Iterable[VoteView]) -> list[str]:
        """Everyone present, in the cast's order, then any other voter."""
        cast = self.runtime.cast
        order = [c.id for c in cast] if cast is not None else []
        shown = set(view.present) | {v.companion for v in votes}
        ids = [c for c in order if c in shown]
        return ids + sorted(shown - set(ids))

    def _name(self, who: str | None) -> str:
        return self._words.name(who)
