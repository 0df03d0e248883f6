"""The settings' voice test says why nothing was heard in the interface's language (before: the reasons were
English in the Japanese window), with the real speaker (pyttsx3 + espeak-ng) of a started app."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.ui.conftest import signal_fired, started_runtime
from ui.settings.dialog import SettingsDialog
from ui.window.main_window import MainWindow


async def _voice_test(qtbot: QtBot) -> SettingsDialog:
    """The window of a started app, its settings opened and "Test voice" pressed; the dialog once it answered."""
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        dialog = window.extras.open_settings()
        async with signal_fired(dialog.voice_tested, timeout=30):
            dialog.test_voice_button.click()
        window.close()
        return dialog


async def test_no_sound_device_is_said_in_japanese(qtbot: QtBot, madoi_home: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MADOI_VOICE_OUTPUT_DIR")  # played aloud, not written to files
    no_players = tmp_path / "bin"
    no_players.mkdir()
    monkeypatch.setenv("PATH", str(no_players))  # a machine with no audio player (pw-play, paplay, aplay)
    dialog = await _voice_test(qtbot)
    assert dialog.voice_result.text() == "再生できませんでした: 音を出すデバイスか再生プログラムが見つかりません"
    assert dialog.voice_result.property("result") == "error"
    assert "no audio player" in dialog.voice_result.toolTip()  # the system's words, for whoever helps


async def test_speech_turned_off_is_said_in_english_and_japanese(qtbot: QtBot, madoi_home: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_VOICE_ENABLED", "false")
    dialog = await _voice_test(qtbot)
    assert dialog.voice_result.text() == "再生できませんでした: 設定で音声がオフになっています"
    monkeypatch.setenv("MADOI_LANGUAGE", "en")
    dialog = await _voice_test(qtbot)
    assert dialog.voice_result.text() == "Not heard: speech is turned off in the settings"
