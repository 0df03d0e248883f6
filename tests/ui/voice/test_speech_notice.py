"""The window says when the companions cannot be heard (before: speech was off with no notice in the window)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.ui.conftest import started_runtime
from ui.window.i18n import deliver_language_change
from ui.window.main_window import MainWindow


async def test_speech_off_is_shown_in_the_status_bar_with_the_reason(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_VOICE_ENABLED", "false")
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        notice = window.speech_notice
        assert notice.isVisible()
        assert notice.text() == "音声はオフです"
        assert "設定で" in notice.toolTip()  # why, in the interface's language
        english = runtime.settings.model_copy(
            update={"general": runtime.settings.general.model_copy(update={"language": "en"})})
        window.extras.settings_saved.emit(english)
        deliver_language_change()  # Qt posted LanguageChange: the loop delivers it a moment later
        assert notice.text() == "Speech is off"
        assert "speech is turned off in the settings" in notice.toolTip()
        window.close()


async def test_no_notice_while_speech_works(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:  # the test environment renders speech to WAV files
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        assert not window.speech_notice.isVisible()
        window.close()
