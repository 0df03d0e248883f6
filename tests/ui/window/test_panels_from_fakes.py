"""Panels built from fakes of their read models (ui/window/panel_ports.py), without a runtime: what they show and the
commands they give. Each panel here is built and checked in milliseconds; tests on the real runtime are beside them."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from app.storage.database import ConversationInfo
from companions.companion.guests import RemoteCompanion
from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView, VoteView
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Action, Message
from tests.ui.conftest import switch_language
from tests.ui.fakes import FakeControl, FakeHistory, FakePeople, NoSearch
from tests.ui.scripted_runtime import until
from tests.waiting import wait_until
from ui.camera.preview import CameraPreview
from ui.chat.conversation_list import ConversationList
from ui.chat.panel import ChatPanel
from ui.roster.roster import RosterPanel
from ui.search.panel import SearchPanel
from ui.turns.panel import TurnsPanel


@pytest.fixture
def bus() -> InProcessBus:
    return InProcessBus()


def _voting(revision: int, speaker: str | None = None) -> ConversationView:
    votes = (VoteView("akari", "voted", "speak", 8, speaker == "akari", reason="星の話がしたい"),
             VoteView("hina", "voted", "listen", 2, reason="聞いていたい"))
    turn = TurnView("m1", "user", 1, "speaking" if speaker else "voting", votes, speaker=speaker)
    return ConversationView(revision, "running", turn, present=("akari", "hina"))


async def test_the_turns_panel_shows_the_view_it_is_given_and_its_buttons_give_commands(
        qtbot: QtBot, bus: InProcessBus) -> None:
    began = time.perf_counter()
    control = FakeControl(_voting(1))
    switch_language("ja")
    panel = TurnsPanel(bus, control, FakePeople())
    qtbot.addWidget(panel)
    panel.show()
    panel.attach()
    built = time.perf_counter() - began
    assert [(r.companion, r.name, r.importance) for r in panel.rows()] == [("akari", "あかり", "8"),
                                                                            ("hina", "ひな", "2")]
    assert panel.stop_button.isEnabled()
    panel.choose("hina")
    panel.mute_button.click()
    panel.next_button.click()
    panel.stop_button.click()
    assert control.commands == [("mute", "hina", "True"), ("force", "hina"), ("stop",)]

    bus.publish(ConversationChanged(_voting(2, speaker="akari"), "speaker"))  # a live change comes over the bus
    await until(panel.rendered, lambda: panel.view.revision == 2)
    akari = panel.row_of("akari")
    assert akari is not None
    assert akari.speaker
    panel.detach()
    assert built < 2.0, f"building the panel from fakes took {built:.3f} s"


async def test_the_conversation_list_lists_switches_and_deletes_through_its_history(
        qtbot: QtBot, bus: InProcessBus) -> None:
    history = FakeHistory([ConversationInfo(2, "お茶", 0.0, 2.0, 1), ConversationInfo(1, "流れ星", 0.0, 1.0, 2)],
                          active=2)
    switch_language("ja")
    listing = ConversationList(bus, history)
    qtbot.addWidget(listing)
    listing.show()
    await listing.attach()
    assert listing.conversation_ids() == [2, 1]
    assert listing.labels()[0].startswith("お茶\n1 件")
    assert listing.current_id() == 2

    listing.select(1)
    listing.items.activated.emit(listing.index_for(1))
    await until(listing.refreshed, lambda: ("switch", "1") in history.commands)

    boxes: list[QMessageBox] = []
    listing.confirmation_shown.connect(boxes.append)
    listing.ask_delete_selected()
    assert len(boxes) == 1
    assert boxes[0].isVisible()
    confirm = boxes[0].findChild(QPushButton, "confirmDeleteButton")
    assert confirm is not None
    confirm.click()
    await until(listing.refreshed, lambda: listing.conversation_ids() == [2])
    assert ("delete", "1") in history.commands
    listing.detach()


async def test_the_search_panel_says_why_search_is_missing(qtbot: QtBot, bus: InProcessBus) -> None:
    panel = SearchPanel(bus, NoSearch(), FakePeople())
    qtbot.addWidget(panel)
    panel.attach()
    assert panel.status.text() == "Search is not available: the index file is broken"
    assert not panel.search_button.isEnabled()
    panel.detach()


async def test_the_camera_panel_without_a_camera_says_so(qtbot: QtBot, bus: InProcessBus) -> None:
    panel = CameraPreview(bus, lambda: None, FakePeople())
    qtbot.addWidget(panel)
    panel.show()
    panel.attach()
    assert panel.state == "off"
    assert panel.indicator.isHidden()
    panel.detach()


async def test_a_new_message_repaints_its_conversation_only(qtbot: QtBot, bus: InProcessBus) -> None:
    history = FakeHistory([ConversationInfo(2, "お茶", 0.0, 2.0, 1), ConversationInfo(1, "流れ星", 0.0, 1.0, 2)],
                          active=2)
    switch_language("ja")
    listing = ConversationList(bus, history)
    qtbot.addWidget(listing)
    await listing.attach()
    changed: list[tuple[int, int]] = []
    resets: list[bool] = []
    listing.model.dataChanged.connect(lambda first, last, *_: changed.append((first.row(), last.row())))
    listing.model.modelReset.connect(lambda: resets.append(True))
    history.conversations[0] = ConversationInfo(2, "お茶", 0.0, 3.0, 2)  # one more message in the active one
    listing.refresh()
    await until(listing.refreshed, lambda: listing.labels()[0].startswith("お茶\n2 件"))
    assert changed == [(0, 0)]
    assert resets == []
    listing.detach()


async def test_a_vote_coming_in_repaints_its_row_only(qtbot: QtBot, bus: InProcessBus) -> None:
    waiting = (VoteView("akari", "voted", "speak", 8, reason="星の話がしたい"), VoteView("hina", "pending"))
    view = ConversationView(1, "running", TurnView("m1", "user", 1, "voting", waiting), present=("akari", "hina"))
    switch_language("ja")
    panel = TurnsPanel(bus, FakeControl(view), FakePeople())
    qtbot.addWidget(panel)
    panel.show()
    panel.attach()
    changed: list[tuple[int, int]] = []
    structure: list[str] = []
    panel.votes_model.dataChanged.connect(lambda first, last, *_: changed.append((first.row(), last.row())))
    for signal in ("modelReset", "rowsInserted", "rowsRemoved"):
        getattr(panel.votes_model, signal).connect(lambda *_, name=signal: structure.append(name))
    bus.publish(ConversationChanged(_voting(2), "vote"))  # hina's vote comes in; akari's row stays as it was
    await until(panel.rendered, lambda: panel.view.revision == 2)
    assert changed == [(2, 2), (3, 3)]  # hina's cells, and her reason under them
    assert structure == []
    assert panel.row_of("hina") is not None
    panel.detach()


async def test_a_speaking_companion_shows_the_feeling_of_its_line_and_its_gesture(
        qtbot: QtBot, bus: InProcessBus) -> None:
    class NobodyElsewhere:
        def network(self) -> list[RemoteCompanion]:
            return []

        def guests(self) -> list[RemoteCompanion]:
            return []

    speaking = ConversationView(1, "running", floor="akari", present=("akari", "hina"))
    switch_language("ja")
    roster = RosterPanel(bus, FakeControl(speaking), FakePeople(), NobodyElsewhere())
    qtbot.addWidget(roster)
    roster.show()
    roster.attach()
    index = roster.index_of("akari")
    assert index is not None
    plain = index.data(Qt.ItemDataRole.DecorationRole).pixmap(32, 32).toImage()
    assert index.data(Qt.ItemDataRole.DisplayRole) == "あかり\n話しています"
    changed: list[int] = []
    roster.model.dataChanged.connect(lambda first, *_: changed.append(first.row()))
    bus.publish(Message.create(from_="akari", message="やったね！", emotion="happy"))
    bus.publish(Action.create(from_="akari", name="gesture", params={"type": "wave"}))
    await wait_until(lambda: len(changed) == 2)
    assert index.data(Qt.ItemDataRole.DisplayRole) == "あかり\n話しています · 手を振っています"
    happy = index.data(Qt.ItemDataRole.DecorationRole).pixmap(32, 32).toImage()
    assert happy != plain  # a face on the avatar while it speaks
    hina = roster.index_of("hina")
    assert hina is not None
    assert hina.data(Qt.ItemDataRole.DisplayRole) == "ひな\n聞いています"  # the others' rows stay as they were
    assert changed == [0, 0]
    roster.detach()


async def test_the_chat_loses_no_line_when_the_bus_is_flooded(qtbot: QtBot, bus: InProcessBus) -> None:
    """More items at once than any queue of the bus holds (4096): lines, and a turn's views between them; every line
    is shown, in order, once."""
    switch_language("ja")
    panel = ChatPanel(bus, FakeHistory(active=1), FakePeople())
    qtbot.addWidget(panel)
    panel.show()
    await panel.attach()
    lines = [Message.create(from_=("akari", "hina", "souta")[i % 3], message=f"line {i}") for i in range(2000)]
    for i, line in enumerate(lines):  # in one go: nothing reaches the GUI thread before the last is published
        bus.publish(line)
        bus.publish(ConversationChanged(_voting(2 * i + 1), "vote"))
        bus.publish(ConversationChanged(_voting(2 * i + 2, speaker="akari"), "speaker"))
    await until(panel.message_shown, lambda: panel.message_count == len(lines), 120)
    shown = panel.view.bubbles()
    assert [b.key for b in shown] == [line.params.id for line in lines]
    panel.detach()
