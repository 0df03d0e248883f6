"""The Turns panel read by a person who never read the seeds, at the width it gets in a 1024 px window,
in English and Japanese: every column in sight, each reason whole under its row, whole seconds, plain words, and
who was named when the floor passed on."""

from __future__ import annotations

import functools

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics
from pytestqt.qtbot import QtBot

from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView, VoteView
from companions.wire.bus import InProcessBus
from tests.ui.conftest import switch_language
from tests.ui.fakes import FakeControl, FakePeople
from tests.ui.scripted_runtime import until
from ui.turns.panel import TurnsPanel
from ui.turns.votes import COLUMNS, REASON_INDENT

SIDE_AT_1024 = (330, 560)  # the side panel's size in a 1024x700 window (the splitter's share)
REASONS = {
    "en": "I have been waiting to tell everyone about the meteor shower I saw from the hill last night",
    "ja": "昨日の夜、丘の上から見た流星群のことをみんなに話したくて、ずっと待っていたから",
}


def _view(language: str) -> ConversationView:
    votes = (VoteView("akari", "voted", "speak", 8, True, reason=REASONS[language]),
             VoteView("hina", "missing", "listen", 0, error="no vote within 11.9293 s"),
             VoteView("souta", "voted", "listen", 2, closing="pre-closing", reason="…"))
    turn = TurnView("m1", "user", 1, "composing", votes, speaker="akari", selection_rule="named")
    return ConversationView(3, "running", turn, present=("akari", "hina", "souta"))


def _shown(panel: TurnsPanel, revision: int) -> bool:
    return panel.view.revision == revision


def _panel(qtbot: QtBot, view: ConversationView, language: str) -> TurnsPanel:
    people = FakePeople({"akari": "Akari" if language == "en" else "あかり", "hina": "Hina" if language == "en"
                         else "ひな", "souta": "Souta" if language == "en" else "颯太"})
    switch_language(language)
    panel = TurnsPanel(InProcessBus(), FakeControl(view), people)
    qtbot.addWidget(panel)
    panel.resize(*SIDE_AT_1024)
    panel.show()
    panel.attach()
    qtbot.waitExposed(panel)
    return panel


@pytest.mark.parametrize("language", ["en", "ja"])
async def test_at_1024_px_every_column_shows_and_each_reason_is_whole_under_its_row(
        qtbot: QtBot, language: str) -> None:
    panel = _panel(qtbot, _view(language), language)
    table = panel.votes
    width = table.viewport().width()
    for column in range(len(COLUMNS)):  # Closing too: nothing off to the right
        assert table.columnViewportPosition(column) + table.columnWidth(column) <= width
        header = panel.votes_model.headerData(column, Qt.Orientation.Horizontal)
        assert table.horizontalHeader().fontMetrics().horizontalAdvance(str(header)) < table.columnWidth(column)
    akari = panel.votes_model.row_of("akari")
    assert akari is not None
    reason_row = akari + 1
    cell = table.visualRect(panel.votes_model.index(reason_row, 0))
    assert cell.width() >= width - 2, "the reason spans the table"
    needed = QFontMetrics(table.font()).boundingRect(
        QRect(0, 0, cell.width() - REASON_INDENT - 8, 10_000), int(Qt.TextFlag.TextWordWrap), REASONS[language])
    assert table.rowHeight(reason_row) >= needed.height(), "wrapped whole, never cut to 'You're not res…'"
    assert needed.height() > QFontMetrics(table.font()).height(), "the test's reason is long enough to wrap"
    hina = panel.row_of("hina")
    souta = panel.row_of("souta")
    assert hina is not None
    assert souta is not None
    if language == "en":
        assert hina.reason == "no vote within 12 s"
        assert souta.closing == "winding down"
        assert panel.row_of("akari").texts()[1] == "speak · 8"  # type: ignore[union-attr]
    else:
        assert "12" in hina.reason
        assert "11.9" not in hina.reason
    assert not any(hina.reason in text for text in ("pre-closing", "waiting for the floor"))
    panel.detach()


async def test_when_the_named_companion_could_not_answer_the_panel_names_it_not_the_speaker(
        qtbot: QtBot) -> None:
    """"Hina, do you like tea?" answered by Akari said "Akari — Akari was named": the floor had passed on."""
    turn = TurnView("m1", "user", 1, "composing", speaker="akari", selection_rule="named", passed_over=("hina",))
    panel = _panel(qtbot, ConversationView(2, "running", turn, present=("akari", "hina", "souta")), "en")
    assert panel.floor.text() == "Speaker: Akari — Hina was named but could not answer, so Akari answers"
    switch_language("ja")
    assert panel.floor.text() == "話し手: Akari — Hina が名指しされましたが答えられなかったので、Akari が答えます"
    panel.detach()


async def test_a_vote_that_becomes_the_speaker_s_bold_row_still_fits_its_column(qtbot: QtBot) -> None:
    """"話したい · 6" measured in a plain row, then shown bold once Hina took the floor, wrapped onto two lines."""
    bus = InProcessBus()
    people = FakePeople({"akari": "あかり", "hina": "ひな", "souta": "颯太"})
    switch_language("ja")
    panel = TurnsPanel(bus, FakeControl(ConversationView(1, "idle", present=("akari", "hina", "souta"))), people)
    qtbot.addWidget(panel)
    panel.resize(*SIDE_AT_1024)
    panel.show()
    panel.attach()
    qtbot.waitExposed(panel)
    votes = (VoteView("hina", "voted", "speak", 6, closing="terminal", reason="おやすみ"),
             VoteView("souta", "voted", "listen", 2, reason="聞いていたい"))
    pictures = []
    for revision, speaker in ((2, None), (3, "hina")):
        turn = TurnView("m5", "akari", 5, "composing" if speaker else "voting", votes, speaker=speaker,
                        selection_rule="wants" if speaker else None)
        bus.publish(ConversationChanged(ConversationView(revision, "running", turn,
                                                         present=("akari", "hina", "souta")), "vote"))
        await until(panel.rendered, functools.partial(_shown, panel, revision))
        row = panel.votes_model.row_of("hina")
        assert row is not None
        pictures.append(panel.votes_model.index(row, 0).data(Qt.ItemDataRole.DecorationRole).toImage())
    hina, souta = panel.votes_model.row_of("hina"), panel.votes_model.row_of("souta")
    assert hina is not None
    assert souta is not None
    assert panel.votes.rowHeight(hina) == panel.votes.rowHeight(souta), "the bold vote wrapped"
    assert pictures[0] == pictures[1], "her picture stays hers (its letter was the speaker's ▶)"
    panel.detach()


async def test_a_reason_shows_as_soon_as_its_vote_comes_and_as_tall_as_the_others(qtbot: QtBot) -> None:
    """Akari's reason stayed hidden while a column's width changed with her vote, then came back too tall."""
    bus = InProcessBus()
    present = ("akari", "hina", "souta")
    panel = TurnsPanel(bus, FakeControl(ConversationView(1, "idle", present=present)),
                       FakePeople({"akari": "Akari", "hina": "Hina", "souta": "Souta"}))
    qtbot.addWidget(panel)
    panel.resize(*SIDE_AT_1024)
    panel.show()
    panel.attach()
    qtbot.waitExposed(panel)
    reason = "I have nothing to add"
    waiting = tuple(VoteView(who, "pending") for who in present)
    akari = VoteView("akari", "voted", "listen", 0, reason=reason)
    everyone = tuple(VoteView(who, "voted", "listen", 0, reason=reason) for who in present)
    for revision, votes in ((2, waiting), (3, (akari, *waiting[1:])), (4, everyone)):
        turn = TurnView("m1", "user", 1, "voting", votes)
        bus.publish(ConversationChanged(ConversationView(revision, "running", turn, present=present), "vote"))
        await until(panel.rendered, functools.partial(_shown, panel, revision))
        if revision == 3:
            assert not panel.votes.isRowHidden(1), "Akari's reason is shown with her vote"
            assert panel.votes.rowHeight(1) > 0
    heights = {panel.votes.rowHeight(row) for row in (1, 3, 5)}
    assert len(heights) == 1, heights
    panel.detach()
