"""The window's layout stays where the user left it while the conversation goes on (issue 23: switching
conversations moved the splitters, because a longer status line in the Turns panel widened its minimum)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from companions.protocol import Message
from tests.ui.conftest import signal_fired, started_runtime
from ui.main_window import MainWindow


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
