"""The window's layout at the sizes people use, while the conversation goes on: switching conversations
moved the splitters (a longer status line in the Turns panel widened its minimum), and at 1024x700 the votes table
was two rows high."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView, VoteView
from companions.wire.protocol import Message
from tests.ui.conftest import signal_fired, started_runtime
from tests.ui.scripted_runtime import until
from ui.window.main_window import MainWindow


async def test_switching_conversations_leaves_the_splitters_where_they_are(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.resize(1024, 700)
        window.show()
        await window.attach()
        qtbot.waitExposed(window)
        conversations = runtime.parts.conversations
        short = conversations.active_id
        assert short is not None
        await runtime.store.add_message(short, Message.create(from_="user", message="やあ"))
        await conversations.new()
        long = conversations.active_id
        assert long is not None
        for _ in range(12):
            await runtime.store.add_message(long, Message.create(from_="akari", message="流れ星の話をしよう。" * 6))
        before = (window.splitter.sizes(), window.left.sizes())
        for target in (short, long, short, long):
            async with signal_fired(window.chat.history_loaded):
                await conversations.switch(target)
            await runtime.bus.drain()
            assert (window.splitter.sizes(), window.left.sizes()) == before, window.turns.status.text()
        window.close()


async def test_at_1024x700_the_turns_panel_shows_every_vote_and_its_reason(qtbot: QtBot, madoi_home: Path) -> None:
    """Earlier turns, tools used and what memory recalled, stacked under the votes, left them two rows high."""
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.resize(1024, 700)
        window.show()
        await window.attach()
        qtbot.waitExposed(window)
        present = ("akari", "hina", "souta")
        reason = "流れ星の話がしたいから、少し長めの理由を書いておく"
        votes = tuple(VoteView(who, "voted", "speak", 5 + i, reason=reason)
                      for i, who in enumerate(present))
        turn = TurnView("m1", "user", 1, "composing", votes, speaker=present[0], selection_rule="wants")
        runtime.bus.publish(ConversationChanged(ConversationView(10_000, "running", turn, present=present), "test"))
        await until(window.turns.rendered, lambda: window.turns.view.revision == 10_000)
        table = window.turns.votes
        shown = sum(table.rowHeight(r) for r in range(table.model().rowCount()) if not table.isRowHidden(r))
        assert shown <= table.viewport().height(), "some votes or reasons are scrolled out of sight"
        window.close()
