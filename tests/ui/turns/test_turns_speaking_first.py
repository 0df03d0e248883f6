"""Speaking first as the user meets it in the window: the first-run card offers it (off by default, saved when
ticked), the Turns panel says why a companion spoke without being spoken to, in both languages, and typing in the
message box holds the companions back. A real started runtime with scripted companions."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from companions.conversation.speaking_first import Occasion, UserTyping, cue
from companions.llm.scripted import mentions, say
from companions.wire.bus import BusItem
from tests.ui.conftest import started_runtime, switch_language
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from tests.waiting import wait_until
from ui.window.main_thread_gc import MainThreadGC
from ui.window.main_window import MainWindow


@pytest.fixture(autouse=True)
def _gc_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """As in the app (ui/window/launch.py): the settings are written on an executor thread, and a collection that
    starts there must not free the windows' Qt objects (it crashes Qt)."""
    guard = MainThreadGC(qapp, interval_ms=200)
    yield
    guard.stop()


async def test_the_first_run_card_offers_speaking_first_off_by_default_and_saves_the_choice(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:  # no model yet: the card is shown
        window = MainWindow(runtime, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        switch_language("ja")
        offer = window.extras.first_run.speak_first
        assert offer.isVisible()
        assert offer.text().startswith("10分黙っていたら、みんなから話しかけてもらう")
        assert not offer.isChecked()  # off until the user chooses it
        qtbot.mouseClick(offer, Qt.MouseButton.LeftButton)
        await wait_until(lambda: load_settings().settings.conversation.speak_first_after_min == 10, timeout=10)
        await wait_until(lambda: runtime.settings.conversation.speak_first_after_min == 10, timeout=10)  # in effect
        qtbot.mouseClick(offer, Qt.MouseButton.LeftButton)
        await wait_until(lambda: load_settings().settings.conversation.speak_first_after_min == 0, timeout=10)
        switch_language("en")
        assert offer.text().startswith("Let them speak first when you have been quiet for 10 minutes")
        window.close()


async def test_the_turns_panel_says_why_a_companion_spoke_first_and_typing_holds_them_back(
        qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, "おかえりを言いたい"))
    votes(cast["hina"], ("listen", 2))
    votes(cast["souta"], ("listen", 1))
    lines(cast["akari"], say("おかえり！12分ぶりだね。", expect=mentions("12分ぶりに戻ってきた")))
    async with scripted_runtime(cast) as runtime:
        window = MainWindow(runtime, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
        qtbot.addWidget(window)
        window.resize(1300, 800)
        window.show()
        await window.attach()
        switch_language("ja")
        turns = window.turns
        returned = Occasion("returned", time.time(), minutes=12)
        assert await runtime.parts.conversation_manager.speak_first(returned, cue(returned, "ja"))
        await until(turns.rendered, lambda: turns.view.ended_reason == "spoke-first", timeout=20)
        assert turns.turn_label.text().startswith("ターン 1 · 先に話しかけてよい：あなたが12分ぶりに戻ってきた")
        assert turns.ended.text() == \
            "終了: あかりが先に話しかけました（あなたが12分ぶりに戻ってきた）。みんなあなたの返事を待っています"
        await until(turns.rendered, lambda: bool(turns.history_lines()), timeout=10)
        # earlier turns say it too
        assert turns.history_lines()[0].startswith("1. あかり — あなたが12分ぶりに戻ってきた：")
        switch_language("en")
        assert turns.turn_label.text().startswith("Turn 1 · may speak first: you came back after 12 minutes")
        assert "Akari spoke first (you came back after 12 minutes)" in turns.ended.text()
        await until(window.chat.message_shown, lambda: "12分ぶりだね" in window.chat.view.toPlainText())
        assert "戻ってきた" not in window.chat.view.toPlainText()  # the cue is the companions' alone

        # Typing tells the companions the user is busy: once a second at most, however fast the keys come.
        typed: list[UserTyping] = []

        def record(item: BusItem) -> None:
            if isinstance(item, UserTyping):
                typed.append(item)

        runtime.bus.subscribe("events", record, name="test-typing", direct=True)
        qtbot.keyClicks(window.chat.input, "wait a moment")  # (QTest types Latin keys only)
        assert len(typed) == 1
        cast.assert_used_up()
        window.close()
