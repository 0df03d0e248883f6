"""The settings dialog on real settings: validation next to the fields, saving (TOML without secrets), the
connection test against loopback HTTP servers with the real openai client, and the voice test."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import keyring.backends.fail
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.llm.connection_check import ConnectionResult
from app.settings.model import Settings, VoiceSettings, load_settings
from app.settings.secrets import LLM_API_KEY, SecretStore
from tests.app.keyrings import DictKeyring
from tests.app.models_server import models_server
from tests.ui.conftest import signal_fired, switch_language
from ui.settings.dialog import SettingsDialog

KEY = "sk-dialog-test-abcdef123456"




def _dialog(qtbot: QtBot, secrets: SecretStore | None = None, **kwargs: object) -> SettingsDialog:
    loaded = load_settings()
    switch_language(str(kwargs.pop("language", loaded.settings.general.language)))  # the window's, as when it opens
    dialog = SettingsDialog(loaded.settings, loaded,
                            secrets=secrets or SecretStore(backend=keyring.backends.fail.Keyring()),
                            **kwargs)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


async def test_a_bad_url_is_explained_under_the_field_and_blocks_saving(qtbot: QtBot, madoi_home: Path) -> None:
    dialog = _dialog(qtbot)
    assert dialog.is_valid
    async with signal_fired(dialog.validity_changed):
        qtbot.keyClicks(dialog.base_url, "localhost:11434")
    assert dialog.field_error("llm.base_url") == "must start with http:// or https://"
    assert not dialog.save_button.isEnabled()
    assert not dialog.test_connection_button.isEnabled()
    dialog.base_url.setText("http://localhost:11434/v1")
    assert dialog.field_error("llm.base_url") == ""
    assert dialog.save_button.isEnabled()


async def test_bridge_port_and_token_rules(qtbot: QtBot, madoi_home: Path) -> None:
    dialog = _dialog(qtbot)
    assert not dialog.bridge_enabled.isChecked()  # MADOI_BRIDGE_PORT=0 in the test home
    assert not dialog.port.isEnabled()
    dialog.bridge_enabled.setChecked(True)
    assert dialog.port.isEnabled()
    dialog.port.setText("99999")
    assert "less than or equal to 65535" in dialog.field_error("bridge.port")
    dialog.port.setText("abc")
    assert "integer" in dialog.field_error("bridge.port")
    dialog.port.setText("0")
    assert "turn the bridge off" in dialog.field_error("bridge.port") or "ブリッジ" in dialog.field_error("bridge.port")
    dialog.port.setText("8765")
    assert dialog.is_valid
    dialog.host.setText("0.0.0.0")
    assert dialog.field_error("bridge.token") != ""
    assert not dialog.save_button.isEnabled()
    qtbot.mouseClick(dialog.findChild(type(dialog.save_button), "generateTokenButton"), Qt.MouseButton.LeftButton)
    assert len(dialog.token.text()) >= 24
    assert dialog.is_valid


async def test_save_writes_the_toml_without_the_key_and_keeps_the_key_in_a_private_file(
        qtbot: QtBot, madoi_home: Path) -> None:
    secrets = SecretStore.for_paths(load_settings().paths, backend=keyring.backends.fail.Keyring())
    dialog = _dialog(qtbot, secrets, language="en")
    assert "readable only by you" in dialog.secret_note.text()
    assert str(madoi_home / "secrets.json") in dialog.secret_note.text()
    dialog.base_url.setText("http://127.0.0.1:11434/v1")
    dialog.api_key.setText(KEY)
    dialog.model.setEditText("qwen2.5:3b")
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    dialog.rate.setValue(200)
    async with signal_fired(dialog.saved):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    saved: Settings = dialog.result_settings
    assert saved.llm.api_key is not None
    assert saved.llm.api_key.get_secret_value() == KEY
    toml = load_settings().paths.settings_file.read_text(encoding="utf-8")
    assert KEY not in toml
    data = tomllib.loads(toml)
    # The test environment's MADOI_LLM_AUTODETECT_LOCAL, MADOI_CAMERA and MADOI_BRIDGE_PORT (tests/conftest.py) are
    # overrides for this run, not settings: none of them is written (before: MADOI_CAMERA=none was).
    # A save writes what the user changed, nothing else (app/settings/merge.py): no default, no override, no key.
    assert data["llm"] == {"base_url": "http://127.0.0.1:11434/v1", "model": "qwen2.5:3b"}
    assert "source" not in data.get("camera", {})
    assert "port" not in data.get("bridge", {})
    again = load_settings().settings
    assert again.general.theme == "dark"
    assert again.voice.rate == 200
    assert secrets.get(LLM_API_KEY) == KEY
    restarted = SecretStore.for_paths(load_settings().paths, backend=keyring.backends.fail.Keyring())
    assert restarted.get(LLM_API_KEY) == KEY  # not lost at restart


async def test_with_a_keyring_the_note_says_so_and_the_key_goes_there(qtbot: QtBot, madoi_home: Path) -> None:
    backend = DictKeyring()
    dialog = _dialog(qtbot, SecretStore(backend=backend), language="ja")
    assert "キーリング" in dialog.secret_note.text()
    dialog.api_key.setText(KEY)
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    assert backend.items == {("madoi", LLM_API_KEY): KEY}


async def test_connection_test_against_a_local_server_shows_the_model_count_and_fills_models(
        qtbot: QtBot, madoi_home: Path) -> None:
    dialog = _dialog(qtbot, language="en")
    with models_server(["llama3.2:1b", "qwen2.5:3b"]) as server:
        dialog.base_url.setText(server.base_url)
        async with signal_fired(dialog.connection_checked):
            qtbot.mouseClick(dialog.test_connection_button, Qt.MouseButton.LeftButton)
    assert dialog.connection_result.text() == "OK: 2 models"
    assert dialog.connection_result.property("result") == "ok"
    assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == ["llama3.2:1b", "qwen2.5:3b"]
    assert dialog.model.currentText() == "llama3.2:1b"


async def test_a_refused_key_is_shown_without_the_key(qtbot: QtBot, madoi_home: Path) -> None:
    dialog = _dialog(qtbot)
    with models_server(required_key="another-key") as server:
        dialog.base_url.setText(server.base_url)
        dialog.api_key.setText(KEY)
        async with signal_fired(dialog.connection_checked):
            dialog.test_connection_button.click()
    shown = dialog.connection_result.text()
    assert "401" in shown
    assert KEY not in shown
    assert dialog.connection_result.property("result") == "error"


async def test_the_window_stays_responsive_while_a_connection_test_runs(qtbot: QtBot, madoi_home: Path) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow_tester(base_url: str, api_key: str | None) -> ConnectionResult:
        started.set()
        await release.wait()
        return ConnectionResult(ok=True, models=["m"])

    dialog = _dialog(qtbot, test_connection=slow_tester, language="en")
    dialog.base_url.setText("http://127.0.0.1:9/v1")
    dialog.test_connection_button.click()
    await asyncio.wait_for(started.wait(), 5)
    assert dialog.connection_result.text() == "Testing…"
    assert not dialog.test_connection_button.isEnabled()  # no double submission
    qtbot.keyClicks(dialog.user_name, "-typing")  # the form still takes input meanwhile
    assert dialog.user_name.text() == "user-typing"
    async with signal_fired(dialog.connection_checked):
        release.set()
    assert dialog.connection_result.text() == "OK: 1 model"


async def test_closing_the_dialog_cancels_a_running_test(qtbot: QtBot, madoi_home: Path) -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def hanging_tester(base_url: str, api_key: str | None) -> ConnectionResult:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    dialog = _dialog(qtbot, test_connection=hanging_tester)
    dialog.base_url.setText("http://127.0.0.1:9/v1")
    dialog.test_connection_button.click()
    await asyncio.wait_for(started.wait(), 5)
    dialog.reject()
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_voice_test_speaks_with_the_form_values_and_reports_failures(qtbot: QtBot, madoi_home: Path) -> None:
    heard: list[tuple[VoiceSettings, str]] = []

    async def speaker(voice: VoiceSettings, sentence: str) -> None:
        heard.append((voice, sentence))
        if len(heard) == 2:
            raise OSError("no audio device")

    dialog = _dialog(qtbot, test_voice=speaker, language="ja")
    assert dialog.save_button.text() == "保存"  # Qt's own "Save" / "Cancel" stayed English
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).text() == "キャンセル"
    dialog.rate.setValue(230)
    dialog.volume.setValue(40)
    async with signal_fired(dialog.voice_tested):
        dialog.test_voice_button.click()
    assert heard[0][0].rate == 230
    assert heard[0][0].volume == 0.4
    assert heard[0][1] == "こんにちは、円居です。"
    assert dialog.voice_result.property("result") == "ok"
    async with signal_fired(dialog.voice_tested):
        dialog.test_voice_button.click()
    assert dialog.voice_result.text() == "再生できませんでした: 音を出すデバイスか再生プログラムが見つかりません"
    assert dialog.voice_result.toolTip() == "no audio device"  # the speaker's words, without the class name
    assert dialog.voice_result.property("result") == "error"


async def test_without_a_speaker_the_voice_test_is_disabled_with_a_reason(qtbot: QtBot, madoi_home: Path) -> None:
    dialog = _dialog(qtbot, language="en")
    assert not dialog.test_voice_button.isEnabled()
    assert dialog.voice_result.text() == "Voice output is not available."
