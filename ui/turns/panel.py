"""The turn-taking view: the current turn's votes, who takes the floor and why, closing progress, how it ended.

Everything shown comes from conversation control's read model (``ConversationChanged`` on the bus ``events``
topic); the buttons are commands on the bus (mute / unmute and "speak next" for the chosen row, interrupt, stop).
Nothing here decides anything: the selection rule, the end reason and the closing stage are values of the read
model, put into the user's language.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterable
from typing import Final

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QPalette, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.conversations.active import ActiveConversationChanged
from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView, VoteView
from companions.wire.bus import Bus, BusItem
from companions.wire.protocol import CLOSING_ORDER
from ui.memory.recalled_view import RecalledView
from ui.roster.display_names import DisplayNames
from ui.turns.history import TurnHistory
from ui.turns.shown import ShownConversation, open_turn
from ui.turns.texts import turns_text
from ui.turns.tool_uses import ToolUsesView
from ui.turns.votes import COLUMNS, COMPANION_ROLE, SPEAKER_MARK, Changes, VoteRow, VotesModel, VotesTable, fit_columns
from ui.turns.wording import TurnsWording
from ui.window.attached import AttachedWidget
from ui.window.i18n import window_language
from ui.window.naming import named
from ui.window.panel_ports import ConversationControl, People

HIDDEN_RENDER_MS: Final = 200  # while another tab is shown, views are rendered at most this often (none is seen)


class TurnsPanel(AttachedWidget, QWidget):
    """The turn-taking view of one runtime. Call :meth:`attach` once the runtime started, :meth:`detach` before
    it stops."""

    rendered = Signal(int)  # the revision of the conversation view just shown

    def __init__(self, bus: Bus, control: ConversationControl, people: People, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.control = control
        self.people = people
        self.names = DisplayNames(people)
        self.status = named(QLabel(), "turnsStatus")
        # "Closing: going on → winding down → wrapping up → goodbye" in one label that wraps (four labels in a row
        # made the panel as wide as the words: the chat lost that width at 1024 px).
        self.closing = named(QLabel(), "closingStages")
        self.closing.setWordWrap(True)
        self.closing.setTextFormat(Qt.TextFormat.RichText)
        self.turn_label = named(QLabel(), "turnsTurn")
        self.floor = named(QLabel(), "turnsFloor")
        self.speaking = named(QLabel(), "turnsSpeaking")
        self.next_up = named(QLabel(), "turnsNext")
        for label in (self.status, self.turn_label, self.floor, self.speaking, self.next_up):
            # Wrapped, never as wide as their words: a longer status ("This conversation has 12 messages…") after
            # switching conversations moved the window's splitters.
            label.setWordWrap(True)
        self.votes_model = VotesModel(self)
        self.votes = named(VotesTable(), "turnsVotes")
        self.votes.setModel(self.votes_model)
        self.votes_model.font = self.votes.font()  # the speaker's row: the table's font, bold
        self.votes.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.votes.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.votes.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.votes.setTabKeyNavigation(False)  # Tab leaves the table for the buttons
        self.votes.verticalHeader().setVisible(False)
        # Columns fitted to the contents and the table's width by fit_columns when cells change (turns_votes.py),
        # not by ResizeToContents: that mode measures the column again on every change of every item (text, data,
        # font), a tenth of a millisecond each. Each reason is a row of its own under its companion's cells.
        self.votes.setShowGrid(False)
        self.votes.selectionModel().selectionChanged.connect(self._update_buttons)
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
        self.history.setWordWrap(True)  # whole lines in a narrow window, no sideways scrolling
        self.history.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.history_title.setBuddy(self.history)
        self.tools_used = named(ToolUsesView(bus, people), "turnsToolsUsed")  # every tool call, MCP ones too
        self.recalled = named(RecalledView(bus, people), "turnsRecalledView")  # what memory brought back
        # Earlier turns, tools used and what memory recalled share one place under the votes, a tab each: stacked,
        # they left the votes table two rows high at 1024x700. The tabs say their titles; the views' own are hidden.
        self.details = named(QTabWidget(), "turnsDetails")
        self.details.setDocumentMode(True)
        for view in (self.history, self.tools_used, self.recalled):
            self.details.addTab(view, "")
        for title in (self.history_title, self.tools_used.title, self.recalled.title):
            title.hide()

        companion_buttons = QHBoxLayout()
        companion_buttons.addWidget(self.mute_button)
        companion_buttons.addWidget(self.next_button)
        companion_buttons.addStretch(1)
        companion_buttons.addWidget(self.interrupt_button)
        companion_buttons.addWidget(self.stop_button)
        # The controls live on a page that the panel sizes by hand (it has no layout of its own): a label whose text
        # changes re-lays out the page only (see _check_fits). With the layout on the panel itself, every new text
        # would re-lay out the stacked widget and the tab widget holding it, and the tab widget repaints all of
        # itself each time.
        self.page = named(QWidget(self), "turnsPage")
        self._page_minimum = QSize()  # the page's minimum size last announced to the tab widget
        layout = QVBoxLayout(self.page)
        layout.addWidget(self.status)
        layout.addWidget(self.ended)
        layout.addWidget(self.closing)
        layout.addWidget(self.turn_label)
        layout.addWidget(self.floor)
        layout.addWidget(self.speaking)
        layout.addWidget(self.next_up)
        layout.addWidget(self.votes, 3)
        layout.addLayout(companion_buttons)
        layout.addWidget(self.history_title)
        layout.addWidget(self.details, 2)
        self.setTabOrder(self.votes, self.mute_button)
        self.setTabOrder(self.mute_button, self.next_button)
        self.setTabOrder(self.next_button, self.interrupt_button)
        self.setTabOrder(self.interrupt_button, self.stop_button)
        self.setTabOrder(self.stop_button, self.history)

        self.view = ConversationView()
        self.shown = ShownConversation()  # what the panel says beyond the view (ui/turns/shown.py)
        self.follow_bus(bus, ("events",))
        self._closing_shown: str | None = None
        self._buttons_shown: tuple[object, ...] | None = None  # what the buttons say and allow now
        self._hidden_render = QTimer(self)  # views that arrive while the panel is hidden: one render now and then
        self._hidden_render.setSingleShot(True)
        self._hidden_render.setInterval(HIDDEN_RENDER_MS)
        self._hidden_render.timeout.connect(self._render)
        self._words = TurnsWording(functools.partial(self.names.of, in_sentence=True))
        self.turn_history = TurnHistory(self.history, self._words.history_line)
        self._name_controls()
        self._render()

    # -- lifecycle -------------------------------------------------------------------------------------------
    def on_attach(self) -> None:
        """Shows the conversation's current state (the bus says what changes from now on)."""
        self.view = self.control.view()
        self._render()
        self.tools_used.attach()
        self.recalled.attach()

    def on_detach(self) -> None:
        self.tools_used.detach()
        self.recalled.detach()

    # -- commands --------------------------------------------------------------------------------------------
    def set_stored_messages(self, count: int) -> None:
        self.shown.stored_messages = count  # an idle conversation with messages can be continued
        self._render()

    def set_muted(self, companion_id: str, muted: bool) -> None:
        self.control.mute(companion_id, muted)

    def speak_next(self, companion_id: str) -> None:
        self.control.force(companion_id)

    def interrupt(self) -> None:
        """Cuts in: the speech and the thinking in progress stop, and the companions wait for the user."""
        self.control.interrupt()

    def stop(self) -> None:
        self.control.stop()

    def chosen(self) -> str | None:
        """The companion of the selected row (the mute and speak-next buttons act on it)."""
        rows = self.votes.selectionModel().selectedRows()
        return str(rows[0].data(COMPANION_ROLE)) if rows else None

    def choose(self, companion_id: str) -> None:
        row = self.votes_model.row_of(companion_id)
        if row is not None:
            self.votes.selectRow(row)

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
        return self.votes_model.rows()

    def row_of(self, companion_id: str) -> VoteRow | None:
        return next((r for r in self.rows() if r.companion == companion_id), None)

    def closing_steps(self) -> list[tuple[str, str]]:
        """The stages as shown: each one's words and how: "current" (bold), "reached" or "ahead" (greyed out)."""
        current = CLOSING_ORDER.index(self.view.closing)
        return [(turns_text(f"closing.{stage}"),
                 "current" if i == current else "reached" if i < current else "ahead")
                for i, stage in enumerate(CLOSING_ORDER)]

    def history_lines(self) -> list[str]:
        return self.turn_history.lines()

    # -- layout ----------------------------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        return self.page.sizeHint()

    def minimumSizeHint(self) -> QSize:
        return self.page.minimumSizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.page.setGeometry(self.rect())  # the table fits its columns and wraps its rows when it is resized

    def _check_fits(self) -> None:
        """Tells the tab widget when the page no longer fits (after new texts), so that it makes room as it would
        for a layout on the panel itself. Other changes of the page's size hints are not announced: the window and
        the splitters read them afresh whenever they lay out again, and each announcement would repaint the whole
        tab widget. (Checked here rather than in ``event()``: a Python ``event()`` would take the GIL for every
        event of the panel, paint events included.)"""
        minimum = self.page.minimumSizeHint()
        if (minimum.width() > self.width() or minimum.height() > self.height()) and minimum != self._page_minimum:
            self._page_minimum = minimum
            self.updateGeometry()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)  # the language: retranslate()
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):  # cells measure differently now
            self.votes_model.font = self.votes.font()
            QTimer.singleShot(0, self, self._fit_columns)

    def retranslate(self) -> None:
        # Qt tells the children after this widget: the tools used and what was recalled say their titles now,
        # which name the tabs.
        self.tools_used.retranslate()
        self.recalled.retranslate()
        self._name_controls()
        self._closing_shown = None
        self.turn_history.rebuild()
        self._render()

    def showEvent(self, event: QShowEvent) -> None:
        if self._hidden_render.isActive():  # what arrived while hidden, before the first paint
            self._render()
        super().showEvent(event)

    # -- the bus ---------------------------------------------------------------------------------------------
    def on_item(self, item: BusItem) -> None:
        if isinstance(item, ConversationChanged):
            if item.view.revision > self.view.revision:
                self.view = item.view
                self.turn_history.note(self.view)  # every view: a turn may finish between two renders
                if self.isVisible():
                    self._render()
                elif not self._hidden_render.isActive():
                    self._hidden_render.start()
        elif isinstance(item, ActiveConversationChanged):
            self.shown.stored_messages = 0  # until the conversation opened is loaded
            self._render()
            self.turn_history.clear()

    # -- rendering -------------------------------------------------------------------------------------------
    def _render(self) -> None:
        self._hidden_render.stop()
        view, turn = self.view, self.view.turn
        _show(self.status, self.shown.status_text(view))
        self._render_closing(view)
        if turn is None:
            _show(self.turn_label, turns_text("turn.none"))
        else:
            _show(self.turn_label, self._words.turn_label(turn, turns_text(f"phase.{turn.phase}")))
        _show(self.floor, self._words.floor(turn))
        _show(self.speaking, turns_text("floor.now", who=self._name(view.floor))
              if view.floor is not None else turns_text("floor.silent"))
        if view.forced_next is not None:
            _show(self.next_up, turns_text("floor.next", who=self._name(view.forced_next)))
        if self.next_up.isHidden() == (view.forced_next is not None):
            self.next_up.setVisible(view.forced_next is not None)
        self._render_votes(view, turn)
        ended = view.status == "ended"
        if ended:
            _show(self.ended, turns_text("ended", reason=self._words.ended(view)))
            if self.ended.toolTip() != view.ended_detail:
                self.ended.setToolTip(view.ended_detail)
        if self.ended.isHidden() == ended:
            self.ended.setVisible(ended)
        self.turn_history.sync()
        self._update_buttons()
        self._check_fits()
        self.rendered.emit(view.revision)

    def _render_closing(self, view: ConversationView) -> None:
        if view.closing == self._closing_shown:
            return
        self._closing_shown = view.closing
        ahead = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText).name()
        shown = []
        for stage, how in self.closing_steps():
            words = html.escape(stage).replace(" ", "&nbsp;")  # a stage never breaks; the arrows between may
            shown.append(f"<b>{words}</b>" if how == "current" else
                         f'<span style="color: {ahead}">{words}</span>' if how == "ahead" else words)
        self.closing.setText(f"{html.escape(turns_text('closing.label'))} {' → '.join(shown)}")
        self.closing.setAccessibleDescription(turns_text(f"closing.{view.closing}"))

    def _render_votes(self, view: ConversationView, turn: TurnView | None) -> None:
        chosen = self.chosen()
        voting = open_turn(view, turn)
        rows = []
        for companion in self._companions(view, turn.votes if turn is not None else ()):
            vote = turn.vote_of(companion) if turn is not None else None
            texts, importance = self._words.vote_cells(vote, muted=companion in view.muted, voting=voting)
            said, weight, selected, closing, reason = texts
            speaker = turn is not None and turn.speaker == companion
            name = f"{SPEAKER_MARK}{self._name(companion)}" if speaker else self._name(companion)
            rows.append(VoteRow(companion, name, said, weight, selected, closing, reason, speaker=speaker,
                                importance_value=importance))
        self._fit_columns(self.votes_model.set_rows(rows))
        if chosen is not None and chosen != self.chosen():
            self.choose(chosen)

    def _fit_columns(self, changes: Changes | None = None) -> None:
        if changes is None:  # another language or font: the texts measure differently
            self.votes_model.forget_widths()
        fit_columns(self.votes, changes)

    def _name_controls(self) -> None:
        self.votes_model.set_headers([turns_text(f"column.{c}") for c in COLUMNS])
        self._fit_columns()
        self.votes.setAccessibleName(turns_text("turns.title"))
        self.next_button.setText(turns_text("speak_next"))
        self.next_button.setToolTip(turns_text("speak_next.tooltip"))
        self.mute_button.setToolTip(turns_text("mute.tooltip"))
        self.interrupt_button.setText(turns_text("interrupt"))
        self.interrupt_button.setToolTip(turns_text("interrupt.tooltip"))
        self.stop_button.setText(turns_text("stop"))
        self.stop_button.setToolTip(turns_text("stop.tooltip"))
        self.history_title.setText(turns_text("history.title"))
        for index, title in enumerate((self.history_title, self.tools_used.title, self.recalled.title)):
            self.details.setTabText(index, title.text())

    def _update_buttons(self) -> None:
        view = self.view
        companion = self.chosen()
        present = companion is not None and companion in view.present
        muted = companion is not None and companion in view.muted
        running = view.status == "running"
        shown = (window_language(), present, muted, running)
        if shown == self._buttons_shown:  # most views change none of them
            return
        self._buttons_shown = shown
        self.mute_button.setText(turns_text("unmute" if muted else "mute"))
        self.mute_button.setEnabled(present)
        self.next_button.setEnabled(present and not muted)
        self.interrupt_button.setEnabled(running)
        self.stop_button.setEnabled(running)
        self._check_fits()

    # -- helpers ---------------------------------------------------------------------------------------------
    def _companions(self, view: ConversationView, votes: Iterable[VoteView]) -> list[str]:
        """Everyone present, in the cast's order, then any other voter."""
        order = self.people.companion_ids()
        shown = set(view.present) | {v.companion for v in votes}
        ids = [c for c in order if c in shown]
        return ids + sorted(shown - set(ids))

    def _name(self, who: str | None) -> str:
        return self._words.name(who)


def _show(label: QLabel, text: str) -> None:
    """Sets a label's text only when it changed (a new text re-lays out the page)."""
    if label.text() != text:
        label.setText(text)
