"""The settings show who answers vision and speak queries, and the choice is saved as bridge.client_answers."""

from __future__ import annotations

from pathlib import Path

import keyring.backends.fail
from pytestqt.qtbot import QtBot

from app.settings.model import BridgeSettings, load_settings
from app.settings.secrets import SecretStore
from tests.ui.conftest import signal_fired, switch_language
from ui.settings.dialog import SettingsDialog
from ui.settings.query_answerers import QueryAnswerers


def test_each_query_type_says_who_answers_it(qtbot: QtBot) -> None:
    view = QueryAnswerers(BridgeSettings(client_answers=["speak"], client_timeout_s=2.5))
    qtbot.addWidget(view)
    assert view.lines["vision"].text().startswith("Camera: the app's camera")
    assert view.lines["speak"].text().startswith("Voice: connected clients first")
    view.asks["vision"].setChecked(True)
    assert view.lines["vision"].text() == ("Camera: connected clients first, the app's camera if none answers "
                                           "within 2.5 s.")
    assert view.client_answers() == ["vision", "speak"]


async def test_the_choice_is_saved_with_the_bridge_settings(qtbot: QtBot, madoi_home: Path) -> None:
    loaded = load_settings()
    switch_language("ja")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    dialog.show()
    assert "アプリのカメラ" in dialog.answerers.lines["vision"].text()
    dialog.answerers.asks["vision"].setChecked(True)
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    assert load_settings().settings.bridge.client_answers == ["vision"]
