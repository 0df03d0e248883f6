"""The Language model and Bridge tabs say where a key or token saved there is kept: the system keyring, else a
file only the user can read (named), else this session only; never silently lost."""

from __future__ import annotations

from pathlib import Path

import keyring.backends.fail
from pytestqt.qtbot import QtBot

from app.settings.model import load_settings
from app.settings.secrets import BRIDGE_TOKEN, SecretStore
from tests.app.keyrings import DictKeyring
from tests.ui.conftest import signal_fired, switch_language
from ui.settings.dialog import SettingsDialog


def _dialog(qtbot: QtBot, secrets: SecretStore) -> SettingsDialog:
    loaded = load_settings()
    switch_language("en")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=secrets)
    qtbot.addWidget(dialog)
    return dialog


async def test_without_a_keyring_both_tabs_name_the_private_file_and_the_token_survives(
        qtbot: QtBot, madoi_home: Path) -> None:
    secrets = SecretStore.for_paths(load_settings().paths, backend=keyring.backends.fail.Keyring())
    dialog = _dialog(qtbot, secrets)
    place = str(madoi_home / "secrets.json")
    assert place in dialog.secret_note.text()
    assert dialog.bridge.token_note is not None
    assert place in dialog.bridge.token_note.text()
    assert "readable only by you" in dialog.bridge.token_note.text()
    dialog.token.setText("tok-abcdef-123456")
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    restarted = SecretStore.for_paths(load_settings().paths, backend=keyring.backends.fail.Keyring())
    assert restarted.get(BRIDGE_TOKEN) == "tok-abcdef-123456"


def test_with_a_keyring_the_tabs_say_so_and_when_nothing_can_be_kept_they_say_that(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path) -> None:
    keyed = _dialog(qtbot, SecretStore.for_paths(load_settings().paths, backend=DictKeyring()))
    assert "system keyring" in keyed.secret_note.text()
    assert keyed.bridge.token_note is not None
    assert "system keyring" in keyed.bridge.token_note.text()
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    stuck = SecretStore(backend=keyring.backends.fail.Keyring(), fallback_file=blocked / "secrets.json")
    stuck.set(BRIDGE_TOKEN, "tok-session-only")
    alone = _dialog(qtbot, stuck)
    assert "this session only" in alone.secret_note.text()
