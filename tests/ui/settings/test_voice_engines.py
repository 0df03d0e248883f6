"""The Camera and voice tab lists the VOICEVOX-compatible engines found, in the window's language, each with its
voices and a test button that says a sentence in the voice picked in the list.

The engines are companions/testing/voicevox_engine.py (VOICEVOX ENGINE's own API, quirks included: see
tests/app/devices/test_voicevox.py), one like VOICEVOX and one like AivisSpeech; the sound device is an ``aplay``
that plays nothing and succeeds.
"""

from __future__ import annotations

import os
from pathlib import Path

import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from companions.testing.voicevox_engine import VoicevoxTestEngine
from tests.ui.conftest import signal_fired, switch_language
from ui.settings.dialog import SettingsDialog


async def test_the_voice_tab_lists_the_engines_found_each_with_a_test(qtbot: QtBot, madoi_home: Path,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "aplay").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "aplay").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    async with VoicevoxTestEngine() as voicevox, VoicevoxTestEngine(profile="aivisspeech") as aivis:
        monkeypatch.setenv("MADOI_VOICE_ENGINES", f"{voicevox.base_url},{aivis.base_url},http://127.0.0.1:9")
        monkeypatch.setenv("MADOI_VOICE_FIND_ENGINES", "false")
        loaded = load_settings()
        switch_language("ja")
        dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
        qtbot.addWidget(dialog)
        dialog.show()
        box = dialog.devices.engines
        async with signal_fired(box.searched):
            dialog.tabs.setCurrentWidget(dialog.devices)  # the engines are looked for when the tab is seen
        assert box.status.text() == "2 個のエンジンが見つかりました"
        rows = [box.tree.topLevelItem(i) for i in range(box.tree.topLevelItemCount())]
        assert [(r.text(0), r.text(1)) for r in rows] == [
            (f"VOICEVOX-compatible 0.25.0（{voicevox.base_url}）", "4 個の声"),
            (f"VOICEVOX-compatible 1.1.0（{aivis.base_url}）", "2 個の声"),
            ("VOICEVOX-compatible（http://127.0.0.1:9）", "応答しません: nothing answers at http://127.0.0.1:9")]
        voices = [(rows[0].child(i).text(0), rows[0].child(i).text(1)) for i in range(rows[0].childCount())]
        assert voices == [("四国めたん (ノーマル)", "2"), ("四国めたん (あまあま)", "0"),
                          ("ずんだもん (ノーマル)", "3"), ("ずんだもん (ささやき)", "22")]
        assert set(box.test_buttons) == {voicevox.base_url, aivis.base_url}  # a test for each engine that speaks
        assert box.test_buttons[voicevox.base_url].text() == "試す"
        box.tree.setCurrentItem(rows[0].child(3))
        async with signal_fired(box.tested, timeout=10):
            box.test_buttons[voicevox.base_url].click()
        assert box.result.text() == "VOICEVOX-compatible ずんだもん (ささやき) が話しました。"
        assert [r.params["speaker"] for r in voicevox.requests if r.path == "/synthesis"] == ["22"]
        assert box.result.textFormat() == Qt.TextFormat.PlainText  # an engine's names are never rich text
        assert dialog.form_values()["voice"]["engines"] == [voicevox.base_url, aivis.base_url, "http://127.0.0.1:9"]
        await aivis.stop()  # the engine quits between the search and the test
        async with signal_fired(box.tested, timeout=10):
            box.test_buttons[aivis.base_url].click()
        assert box.result.text().startswith("再生できませんでした: ")
        assert "does not answer" in box.result.text()
        dialog.close()
