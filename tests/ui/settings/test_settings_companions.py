"""The settings dialog's Companions and Search tabs on real parts: the companions' cards, the local
OpenAI-compatible test server (its model list and one short request through the companion's own model path), the
app's speaker (real pyttsx3 + espeak-ng writing WAV files), and the settings file."""

from __future__ import annotations

import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import keyring.backends.fail
import pytest
from pytestqt.qtbot import QtBot

from app.cards.checks import CompanionChecks
from app.devices.wiring import Devices, build_devices
from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from companions.cards.card import load_cards, sample_cards_dir
from companions.testing.openai_server import OpenAITestServer, text_reply
from companions.wire.bus import InProcessBus
from tests.ui.conftest import signal_fired, switch_language
from ui.settings.dialog import SettingsDialog


async def _dialog(qtbot: QtBot, language: str, checks: CompanionChecks | None = None,
                  base_url: str | None = None) -> SettingsDialog:
    """The dialog once the Companions tab has asked the default server for its models (no request left running)."""
    loaded = load_settings()
    if base_url is not None:
        loaded.settings.llm.base_url = base_url
    switch_language(language)
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()),
                            companions=checks)
    qtbot.addWidget(dialog)
    dialog.show()
    async with signal_fired(dialog.companions.models_offered, 10):
        dialog.tabs.setCurrentWidget(dialog.companions)  # asks the default server for its models
    return dialog


@pytest.fixture
async def devices(madoi_home: Path) -> AsyncIterator[Devices]:
    bus = InProcessBus()
    built = build_devices(load_settings().settings, bus, speech_dir=madoi_home / "speech")
    await built.speaker.start()
    try:
        yield built
    finally:
        await built.speaker.stop()
        await bus.aclose()


def _cards() -> list:  # type: ignore[type-arg]
    return load_cards([sample_cards_dir()]).cards


async def test_each_companion_is_listed_by_name_with_the_servers_models_and_its_test(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with OpenAITestServer(models=["qwen-small", "llama-big"]) as server:
        dialog = await _dialog(qtbot, "ja", base_url=server.base_url)
        page = dialog.companions
        assert [row.title() for row in page.rows.values()] == ["あかり", "ひな", "颯太"]
        akari = page.rows["akari"]
        assert [akari.model.itemText(i) for i in range(akari.model.count())] == ["llama-big", "qwen-small"]
        assert akari.model.currentText() == ""  # nothing chosen: the card's model
        akari.model.setEditText("llama-big")
        server.script(text_reply("やあ"))
        async with signal_fired(page.model_tested):
            akari.test_model_button.click()
        assert akari.model_result.text().startswith("llama-big が ")
        assert akari.model_result.text().endswith("秒で答えました。")
        assert akari.model_result.property("result") == "ok"
        assert server.chat_requests()[-1].body["model"] == "llama-big"
        akari.model.setEditText("no-such-model")
        async with signal_fired(page.model_tested):
            akari.test_model_button.click()
        assert akari.model_result.text() == "サーバーに no-such-model というモデルはありません。"
        assert akari.model_result.property("result") == "error"


async def test_a_model_test_without_any_server_says_so_in_english(qtbot: QtBot, madoi_home: Path) -> None:
    dialog = await _dialog(qtbot, "en", base_url="http://127.0.0.1:9/v1")
    row = dialog.companions.rows["hina"]
    assert row.title() == "Hina"  # the name in the interface language
    row.model.setEditText("qwen-small")
    async with signal_fired(dialog.companions.model_tested):
        row.test_model_button.click()
    assert row.model_result.text() == "No model server answers at http://127.0.0.1:9/v1."
    assert "cannot reach" in row.model_result.toolTip()


async def test_the_voices_of_the_language_are_offered_and_one_is_said(
        qtbot: QtBot, madoi_home: Path, devices: Devices) -> None:
    dialog = await _dialog(qtbot, "ja", CompanionChecks(_cards, lambda: devices))
    hina = dialog.companions.rows["hina"]
    labels = [hina.voice.itemText(i) for i in range(hina.voice.count())]
    assert labels[0] == "カードのとおり（ja）"
    assert "Japanese" in labels
    assert "Japanese・女声 3" in labels
    hina.voice.setCurrentIndex(labels.index("Japanese・女声 3"))
    spoken = list((madoi_home / "speech").glob("*.wav"))
    async with signal_fired(dialog.companions.voice_tested):
        hina.test_voice_button.click()
    assert hina.voice_result.text() == "再生しました。"
    assert len(list((madoi_home / "speech").glob("*.wav"))) == len(spoken) + 1  # said by the app's speaker
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    data = tomllib.loads(load_settings().paths.settings_file.read_text(encoding="utf-8"))
    assert data["companions"] == {"hina": {"voice": {"ja": "jpx/ja+f3"}}}  # only what was chosen
    assert load_settings().settings.companion("hina").voice == {"ja": "jpx/ja+f3"}


async def test_without_the_apps_speaker_the_voice_test_says_why(qtbot: QtBot, madoi_home: Path) -> None:
    dialog = await _dialog(qtbot, "en")
    akari = dialog.companions.rows["akari"]
    assert not akari.test_voice_button.isEnabled()
    assert akari.voice_result.text() == "Voice output is not available."
    assert akari.voice.count() == 1  # the card's voice only: no engine to ask


async def test_a_chosen_model_is_saved_and_a_bad_one_is_never_written(qtbot: QtBot, madoi_home: Path) -> None:
    dialog = await _dialog(qtbot, "en")
    dialog.companions.rows["souta"].model.setEditText("  qwen2.5:3b ")
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    assert load_settings().settings.companion("souta").model == "qwen2.5:3b"
    assert load_settings().settings.companion("akari").model is None
    settings_file = load_settings().paths.settings_file
    settings_file.write_text(settings_file.read_text(encoding="utf-8")
                             + '\n[companions.akari]\nbase_url = "localhost:1"\nmodel = "m"\n', encoding="utf-8")
    again = load_settings()
    assert again.settings.companion("akari").model == "m"  # the good key stays, the bad one is reported
    assert any("companions.akari.base_url" in p for p in again.problems)


async def test_knowledge_folders_are_added_removed_and_checked(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path) -> None:
    dialog = await _dialog(qtbot, "ja")
    dialog.tabs.setCurrentWidget(dialog.search)
    folder = tmp_path / "notes"
    folder.mkdir()
    dialog.search.add_folder(folder)
    dialog.search.add_folder(tmp_path / "gone")
    assert dialog.field_error("search.folders") == f"{tmp_path / 'gone'} がありません。"
    assert not dialog.save_button.isEnabled()
    dialog.search.remove_selected()  # the last one added is selected
    assert dialog.is_valid
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    assert load_settings().settings.search.folders == [folder]
