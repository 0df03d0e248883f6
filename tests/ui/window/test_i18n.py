"""The interface's languages through Qt's translation machinery (ui/window/i18n.py, scripts/i18n.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLabel, QWidget
from pytestqt.qtbot import QtBot

from scripts.script_modules import load_script
from tests.ui.conftest import switch_language
from ui.chat.texts import chat_text
from ui.search.research import ResearchBox
from ui.search.texts import search_text
from ui.turns.texts import turns_text
from ui.window.i18n import is_language_change, translate, use_language, window_language
from ui.window.notifications import Notification, Toast

REPO = Path(__file__).resolve().parents[3]
i18n_script = load_script("i18n")


def test_every_text_in_the_code_has_its_japanese_in_the_catalogue() -> None:
    assert i18n_script.check() == []


def test_an_untranslated_text_is_found(tmp_path: Path) -> None:
    ts = tmp_path / "madoi_ja.ts"
    ts.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n<TS version="2.1" language="ja_JP">\n'
                  "<context><name>turns</name>\n"
                  "<message><source>Stop</source><translation>止める</translation></message>\n"
                  '<message><source>Go on</source><translation type="unfinished"></translation></message>\n'
                  "</context></TS>\n", encoding="utf-8")
    assert i18n_script.unfinished(ts) == [("turns", "Go on")]


def test_texts_come_from_the_compiled_catalogue_in_either_language() -> None:
    assert turns_text("stop", "ja") == "止める"
    assert turns_text("stop", "en") == "Stop"
    assert turns_text("status.resumable", "ja", n=3).startswith("この会話には 3 件のメッセージがあります。")
    # the same English in two places, two translations (told apart by their contexts)
    assert (turns_text("state.speaking", "ja"), turns_text("phase.speaking", "ja")) == ("話しています", "発話中")
    assert (search_text("research", "ja"), search_text("research.title", "ja")) == ("調べる", "調査")


def test_a_language_without_a_catalogue_shows_english_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        assert translate("turns", "Stop", "fr") == "Stop"
    assert "scripts/i18n.py build" in caplog.text


def test_qt_own_texts_and_tr_follow_the_language_switched_live(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    qtbot.addWidget(buttons)
    try:
        use_language("ja", app)
        fresh = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        qtbot.addWidget(fresh)
        assert fresh.button(QDialogButtonBox.StandardButton.Cancel).text() == "キャンセル"
        toast = Toast(Notification("title", "body"), 1000)
        qtbot.addWidget(toast)
        assert toast.close_button.toolTip() == "閉じる"  # a widget's own self.tr()
        use_language("en", app)
        again = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        qtbot.addWidget(again)
        assert again.button(QDialogButtonBox.StandardButton.Cancel).text() == "Cancel"
    finally:
        use_language("en", app)


class _SendLabel(QLabel):
    """A widget as the window's are: its words in the window's language, said again when it changes."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.retranslate()

    def retranslate(self) -> None:
        self.setText(chat_text("send"))

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self.retranslate()
        super().changeEvent(event)


def test_a_language_switch_reaches_every_widget_without_being_handed_the_language(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    inner = _SendLabel(QWidget(window))  # a child of a child: Qt passes the event down
    assert (window_language(), inner.text()) == ("en", "Send")
    switch_language("ja")
    assert (window_language(), inner.text()) == ("ja", "送信")
    assert chat_text("send", "en") == "Send"  # a language that is data is still asked for by name
    switch_language("en")
    assert inner.text() == "Send"


def test_counts_take_their_plural_form_in_either_language(qtbot: QtBot) -> None:
    """Before: "1 messages", "from 1 searches". Qt's plural forms: English ones from madoi_en.ts (plurals only)."""
    assert chat_text("summary", "en", n=1, when="today") == "1 message · today"
    assert chat_text("summary", "en", n=2, when="today") == "2 messages · today"
    assert chat_text("summary", "ja", n=1, when="今日") == "1 件 · 今日"
    assert turns_text("status.resumable", "en", n=1) == "This conversation has 1 message: write to continue it."
    for language in ("en", "ja"):
        switch_language(language)
        box = ResearchBox(lambda: {})  # type: ignore[arg-type,return-value]
        qtbot.addWidget(box)
        box.set_status("stage.done", citations=1, searches=1)
        assert box.status.text() == ("Done: 1 citation from 1 search." if language == "en"
                                     else "完了: 1 回の検索から引用 1 件。")
        box.set_status("stage.done", citations=3, searches=2)
        assert box.status.text() == ("Done: 3 citations from 2 searches." if language == "en"
                                     else "完了: 2 回の検索から引用 3 件。")
    assert i18n_script.unfinished(REPO / "resources" / "i18n" / "madoi_en.ts") == []
