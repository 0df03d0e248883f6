"""Mei's licence (CC BY 3.0) asks for its authors to be named where the voice is used: the About box, the README."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from ui.window.about import about_action, about_text

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("text", [about_text(), (REPO / "README.md").read_text(encoding="utf-8")])
def test_mei_and_its_authors_are_credited(text: str) -> None:
    text = " ".join(text.split())  # as read, whatever the line breaks
    for credit in ('"Mei"', "Nagoya Institute of Technology", "MMDAgent Project Team", "CC BY 3.0",
                   "https://creativecommons.org/licenses/by/3.0/", "Open JTalk"):
        assert credit in text


@pytest.mark.parametrize("text", [about_text(), (REPO / "README.md").read_text(encoding="utf-8")])
def test_kokoro_and_its_makers_are_credited(text: str) -> None:
    text = " ".join(text.split())
    for credit in ("Kokoro-82M", "hexgrad", "Apache-2.0", "thewh1teagle", "kokoro-onnx", "MIT", "misaki"):
        assert credit in text


def test_the_about_action_is_there_for_the_menu(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QWidget

    window = QWidget()
    qtbot.addWidget(window)
    action = about_action(window)
    assert action.objectName() == "aboutAction"
    assert "About" in action.text()


@pytest.mark.parametrize("text", [about_text(), (REPO / "README.md").read_text(encoding="utf-8")])
def test_whisper_and_its_makers_are_credited(text: str) -> None:
    text = " ".join(text.split())
    for credit in ("Whisper base", "OpenAI", "SYSTRAN", "faster-whisper", "CTranslate2", "MIT"):
        assert credit in text
