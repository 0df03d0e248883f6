"""Keys a desktop program has: Esc interrupts, Ctrl+Shift+S (or Shift+Esc) stops, Ctrl+N starts a
conversation and puts the focus in the message box, Ctrl+Q quits, all in a Conversation menu beside Settings."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from companions.conversation.control_state import ControlOutcome
from companions.wire.protocol import Message
from tests.ui.conftest import signal_fired, started_runtime
from tests.ui.scripted_runtime import until
from ui.window.main_window import MainWindow


async def test_esc_interrupts_shift_esc_stops_ctrl_q_quits_from_the_message_box(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with started_runtime() as runtime:
        commands: list[str] = []
        got = asyncio.Event()
        control = runtime.parts.control

        def recording(command: str, obey: Callable[[], Awaitable[ControlOutcome]]) -> Callable[[], object]:
            def called() -> Awaitable[ControlOutcome]:
                commands.append(command)
                got.set()
                return obey()  # and obeyed as always
            return called

        # What the keys call on the one conversation control (what each command does has its own tests).
        monkeypatch.setattr(control, "interrupt", recording("interrupt", control.interrupt))
        monkeypatch.setattr(control, "stop_conversation", recording("stop", control.stop_conversation))
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        await window.attach()
        titles = [a.text() for a in window.menuBar().actions()]
        assert titles == ["円居(&M)", "会話(&C)"]
        window.chat.input.setFocus()
        shift, ctrl = Qt.KeyboardModifier.ShiftModifier, Qt.KeyboardModifier.ControlModifier
        for key, modifier, kind in ((Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier, "interrupt"),
                                    (Qt.Key.Key_Escape, shift, "stop"),
                                    (Qt.Key.Key_S, ctrl | shift, "stop")):
            got.clear()
            qtbot.keyClick(window.chat.input, key, modifier)
            await asyncio.wait_for(got.wait(), 5)
            assert commands[-1] == kind
        # Window managers take Shift+Esc (icewm: the window menu): the menu shows the key that always reaches Madoi.
        assert window.conversation_menu.actions["stop"].shortcut().toString() == "Ctrl+Shift+S"
        first = runtime.parts.conversations.active_id
        assert first is not None
        await runtime.store.add_message(first, Message.create(from_="akari", message="こんばんは"))
        async with signal_fired(window.conversations.refreshed):
            window.conversations.refresh()  # a conversation with a message: Ctrl+N opens another
        window.roster.list.setFocus()
        qtbot.keyClick(window.roster.list, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        assert window.focusWidget() is window.chat.input, "after Ctrl+N the user types the first message"
        await until(window.conversations.refreshed, lambda: len(window.conversations.conversation_ids()) == 2)
        assert runtime.parts.conversations.active_id != first
        window.conversations.items.setFocus()
        qtbot.mouseClick(window.conversations.new_button, Qt.MouseButton.LeftButton)
        assert window.focusWidget() is window.chat.input, "after New the user types the first message"
        async with signal_fired(window.closed):
            qtbot.keyClick(window.chat.input, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
        assert not window.isVisible()
