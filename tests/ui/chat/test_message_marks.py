"""What the chat says quietly about a message: a stock filler that stood in for a companion's line is
marked with the reason, an edited message says so, both still after the conversation is opened again; after
repeated fillers the window suggests a larger model, with a button to the model settings."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from companions.companion.filler import FillerReason, filler_metadata
from companions.wire.protocol import Message, MessageMetadata, MessageParams, new_id
from tests.ui.conftest import signal_fired, started_runtime
from tests.ui.scripted_runtime import until
from ui.chat.texts import chat_text
from ui.window.i18n import window_language
from ui.window.main_window import MainWindow


def _line(who: str, text: str, filler: FillerReason | None = None) -> Message:
    metadata = MessageMetadata.model_validate({"emotion": "neutral", **(filler_metadata(filler) if filler else {})})
    return Message(params=MessageParams(id=new_id(), from_=who, to=["user"], message=text, metadata=metadata))


def _header(window: MainWindow, text: str) -> str:
    return next(b.header for b in window.chat.view.bubbles() if b.text == text)


async def test_fillers_and_edits_are_marked_and_stay_marked(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        language = window_language()
        parrot, own = _line("akari", "うん、そうだね。", "parrot"), _line("hina", "お茶は好きだよ。")
        async with signal_fired(window.chat.message_shown):
            runtime.bus.publish(parrot)
        async with signal_fired(window.chat.message_shown):
            runtime.bus.publish(own)
        stand_in = chat_text("filler.parrot", language)
        assert stand_in in _header(window, "うん、そうだね。")
        assert stand_in not in _header(window, "お茶は好きだよ。")
        assert "(" not in _header(window, "お茶は好きだよ。")
        assert "（" not in _header(window, "お茶は好きだよ。")

        await runtime.bus.drain()  # stored
        await window.message_actions.revise(own.params.id, "紅茶が好きだよ。")
        await runtime.bus.drain()
        edited = chat_text("note.edited", language)
        assert _header(window, "紅茶が好きだよ。").endswith(edited)

        first = runtime.parts.conversations.active_id
        assert first is not None
        async with signal_fired(window.chat.history_loaded):
            await runtime.parts.conversations.new()
        await runtime.parts.conversations.switch(first)  # opened again: the marks come from storage
        await until(window.chat.history_loaded, lambda: len(window.chat.view.bubbles()) == 2)
        assert stand_in in _header(window, "うん、そうだね。")
        assert _header(window, "紅茶が好きだよ。").endswith(edited)
        window.close()


async def test_repeated_fillers_suggest_a_larger_model_and_open_its_settings(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        notices = window.extras.notifications
        for text, filler in (("なるほどね。", "language"), ("花火を見たよ。", None), ("うん、そうだね。", "parrot")):
            async with signal_fired(window.chat.message_shown):
                runtime.bus.publish(_line("akari", text, filler))
        assert window.extras.filler_notice.suggested is None  # two stand-ins: not yet
        async with signal_fired(notices.shown):
            runtime.bus.publish(_line("hina", "へえ、そうなんだ。", "empty"))
        toast = notices.visible_toasts[-1]
        assert toast.notification is window.extras.filler_notice.suggested
        assert "3" in toast.notification.text
        assert toast.action_button is not None
        qtbot.mouseClick(toast.action_button, Qt.MouseButton.LeftButton)
        dialog = window.extras.dialog
        assert dialog is not None
        assert dialog.tabs.currentWidget() is dialog.llm  # where a larger model is set
        dialog.reject()
        async with signal_fired(window.chat.message_shown):  # said once per run, not at every filler after
            runtime.bus.publish(_line("souta", "そっか。", "repeat"))
        await until(window.chat.message_shown, lambda: True)
        assert [n for n in notices.history if n.title == toast.notification.title] == [toast.notification]
        window.close()
