"""The window shell against the real runtime: history on start, sending, layout remembered."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from companions.protocol import Message
from tests.ui.conftest import signal_fired, started_runtime
from ui.main_window import MainWindow


async def test_typing_enter_sends_stores_and_shows_the_message(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        window.show()
        window.chat.input.insertPlainText("こんにちは、みんな")  # QTest can only type ASCII; an IME inserts text
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        qtbot.keyClicks(window.chat.input, "second line")
        assert window.chat.message_count == 0  # Shift+Enter is a newline, not a send
        async with signal_fired(window.chat.message_shown):
            qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        assert window.chat.message_count == 1
        assert "こんにちは、みんな" in window.chat.view.toPlainText()
        assert window.chat.input.toPlainText() == ""
        assert runtime.conversation_id is not None
        await runtime.bus.drain()
        stored = await runtime.store.messages(runtime.conversation_id)
        assert stored[0].message.params.message == "こんにちは、みんな\nsecond line"
        window.close()


async def test_history_of_the_stored_conversation_is_shown_on_start(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        assert runtime.conversation_id is not None
        for text in ("first", "second"):
            await runtime.store.add_message(runtime.conversation_id, Message.create(from_="akari", message=text))
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        text = window.chat.view.toPlainText()
        assert text.index("first") < text.index("second")
        assert "akari" in text
        window.close()


async def test_layout_is_remembered_between_runs(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        window.resize(760, 500)  # the offscreen screen is 800x600
        window.splitter.setSizes([100, 400, 200])
        remembered = window.splitter.sizes()
        window.close()
        again = MainWindow(runtime)
        qtbot.addWidget(again)
        again.show()
        assert again.size().width() == 760
        assert again.splitter.sizes() == remembered
        again.close()
