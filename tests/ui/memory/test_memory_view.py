"""The Memory view on a real started runtime: what a companion remembers (an imported conversation), searched,
forgotten line by line and all at once, and the switch saved in the settings; recall follows at once."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.conversations.transfer import ConversationImporter, ImportReport, TransferConversation
from app.memory.access import RuntimeMemory
from app.runtime.panels import RuntimePeople
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from tests.ui.conftest import signal_fired, started_runtime, switch_language
from ui.memory.view import MemoryView

MAY_8 = dt.datetime(2023, 5, 8, 13, 56).astimezone()


async def _remembered(runtime: Runtime) -> None:
    """Taro told Akari and Hina about his cat and his trip on 8 May 2023 (imported)."""
    assert runtime.parts.cast.store is not None
    assert runtime.parts.search is not None
    importer = ConversationImporter(runtime.store, runtime.parts.cast.store, runtime.parts.search.engine,
                                    user_id="user", names={"akari": "あかり", "hina": "ひな"})
    lines = [("m1", "user", "My cat is called Mochi and she sleeps all day"),
             ("m2", "akari", "Mochi is a lovely name for a cat"),
             ("m3", "user", "Next month I am going to Okinawa with my sister"),
             ("m4", "hina", "Okinawa! Take a lot of pictures of the sea")]
    conversation = TransferConversation.model_validate({"title": "May", "messages": [
        {"id": mid, "from": sender, "to": [], "message": text, "time": (MAY_8 + dt.timedelta(minutes=n)).isoformat()}
        for n, (mid, sender, text) in enumerate(lines)]})
    report = ImportReport()
    await importer.add(conversation, report)
    assert report.imported


async def _recalled(runtime: Runtime, companion: str, text: str) -> list[str]:
    recall = runtime.parts.cast.companions[companion].recall
    assert recall is not None
    return [i.text for i in await recall.port.recall(companion, text, limit=10)]


async def test_the_memory_view_lists_searches_and_forgets(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        await _remembered(runtime)
        switch_language("ja")
        view = MemoryView(RuntimeMemory(runtime), RuntimePeople(runtime))
        qtbot.addWidget(view)
        view.show()
        async with signal_fired(view.loaded):
            view.companion.setCurrentIndex(view.companion.findData("akari"))
            view.refresh()
        assert view.shown_lines()[0] == "2023/5/8 13:59 · ひな: Okinawa! Take a lot of pictures of the sea"
        assert len(view.shown_lines()) == 4
        assert "あかりは 4 行を覚えています。" in view.summary.text()
        assert view.switch.isChecked()

        async with signal_fired(view.loaded):
            view.search.setText("mochi")  # filtered after a short pause
        assert [line.split(": ", 1)[1] for line in view.shown_lines()] == [
            "Mochi is a lovely name for a cat", "My cat is called Mochi and she sleeps all day"]

        view.lines.item(1).setSelected(True)  # the user's line about the cat
        assert view.forget_button.isEnabled()
        async with signal_fired(view.loaded):
            view.forget_selected()
        assert [line.split(": ", 1)[1] for line in view.shown_lines()] == ["Mochi is a lovely name for a cat"]
        assert "My cat is called Mochi and she sleeps all day" not in await _recalled(runtime, "akari", "my cat")
        assert "My cat is called Mochi and she sleeps all day" in await _recalled(runtime, "hina", "my cat")

        async with signal_fired(view.loaded):
            view.search.setText("")
        view.switch.setChecked(False)  # saved at once
        assert load_settings().settings.companion("akari").memory is False
        assert await _recalled(runtime, "akari", "Okinawa sister") == []
        view.switch.setChecked(True)
        assert "Next month I am going to Okinawa with my sister" in await _recalled(runtime, "akari", "Okinawa")

        boxes: list[QMessageBox] = []
        view.confirmation_shown.connect(boxes.append)
        view.forget_everything()
        assert "あかりは覚えている 3 行をすべて忘れます" in boxes[0].text()
        async with signal_fired(view.loaded):
            boxes[0].button(QMessageBox.StandardButton.Yes).click()
        assert view.shown_lines() == []
        assert "あかりはまだ何も覚えていません。" in view.summary.text()
        assert await _recalled(runtime, "akari", "Okinawa sister cat Mochi") == []
        assert not view.forget_all_button.isEnabled()
        view.close()
