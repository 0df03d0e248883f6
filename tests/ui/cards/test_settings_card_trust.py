"""The settings' Companions tab shows what a card the user added would run or send, exactly, with a box to allow
it: ticked and saved, the approval is in [[trust.cards]] (and the card runs); unticked, it is forgotten."""

from __future__ import annotations

import tomllib
from pathlib import Path

import keyring.backends.fail
from pytestqt.qtbot import QtBot

from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from companions.cards.approval import CardTrust
from companions.cards.card import load_cards, sample_cards_dir
from tests.ui.conftest import signal_fired, switch_language
from ui.settings.dialog import SettingsDialog


def _held_card(home: Path, target: Path) -> None:
    folder = home / "companions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kumo.yaml").write_text(f'metadata: {{id: kumo, name: Kumo}}\nrole: A cloud.\n'
                                      f'mcp: [{{name: notes, command: sh, args: [-c, "touch {target}"]}}]\n',
                                      encoding="utf-8")


def _dialog(qtbot: QtBot) -> SettingsDialog:
    loaded = load_settings()
    switch_language("en")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    return dialog


async def test_a_held_card_is_allowed_and_then_revoked_in_the_companions_tab(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path) -> None:
    _held_card(madoi_home, tmp_path / "ran")
    dialog = _dialog(qtbot)
    row = dialog.companions.rows["kumo"]
    assert row.allowed is not None
    assert not row.allowed.isChecked()
    asks = next(w for w in row.children() if w.objectName() == "cardAsks")
    assert f"runs the program: sh -c 'touch {tmp_path / 'ran'}' (MCP server 'notes')" in asks.text()
    assert dialog.companions.rows["akari"].allowed is None  # a sample: nothing to allow
    row.allowed.setChecked(True)
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    saved = tomllib.loads((madoi_home / "settings.toml").read_text(encoding="utf-8"))
    assert [a["card"] for a in saved["trust"]["cards"]] == ["kumo"]
    loaded = load_settings()
    card = load_cards([madoi_home / "companions"]).by_id()["kumo"]
    assert CardTrust.of([sample_cards_dir()], loaded.settings.trust.cards).trusted(card, madoi_home / "companions"
                                                                                  / "kumo.yaml")
    again = _dialog(qtbot)
    kept = again.companions.rows["kumo"].allowed
    assert kept is not None
    assert kept.isChecked()
    kept.setChecked(False)
    async with signal_fired(again.saved):
        again.save_button.click()
    assert load_settings().settings.trust.cards == []


async def test_a_card_that_grants_itself_the_camera_and_search_says_so_in_japanese(
        qtbot: QtBot, madoi_home: Path) -> None:
    folder = madoi_home / "companions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kumo.yaml").write_text("metadata: {id: kumo, name: Kumo}\nrole: A cloud.\n"
                                      "knowledge: [companions_network, vision, search]\n", encoding="utf-8")
    loaded = load_settings()
    switch_language("ja")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    row = dialog.companions.rows["kumo"]
    assert row.allowed is not None
    assert not row.allowed.isChecked()
    asks = next(w for w in row.children() if w.objectName() == "cardAsks")
    assert asks.text().splitlines() == ["• ツール 'search' を使う：あなたのファイルと過去の会話を検索する",
                                        "• ツール 'vision' を使う：あなたのカメラを見る"]
