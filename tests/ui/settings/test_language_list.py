"""The language list of Settings > General shows each language's whole name under either theme (the theme's padding
of list views once cut the drop-down's longest item to "E…h")."""

from __future__ import annotations

from pathlib import Path

import keyring.backends.fail
import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QComboBox
from pytestqt.qtbot import QtBot

from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from ui.settings.dialog import SettingsDialog
from ui.window.theme import apply_theme


def _ink_width(image: QImage, top: int, bottom: int) -> int:
    """How wide the drawn text of the rows between ``top`` and ``bottom`` is: from its first to its last column that
    differs from the background (the colour of the row's right end)."""
    background = image.pixelColor(image.width() - 2, (top + bottom) // 2).lightness()
    columns = [x for x in range(image.width())
               if any(abs(image.pixelColor(x, y).lightness() - background) > 60 for y in range(top, bottom))]
    return columns[-1] - columns[0] + 1 if columns else 0


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_language_is_named_whole_in_the_open_list(qtbot: QtBot, madoi_home: Path, theme: str) -> None:
    apply_theme(QApplication.instance(), theme)  # type: ignore[arg-type]
    loaded = load_settings()
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    dialog.show()
    combo = dialog.findChild(QComboBox, "languageCombo")
    assert combo is not None
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    try:
        image = view.viewport().grab().toImage()
        for row in range(combo.count()):
            rect = view.visualRect(combo.model().index(row, 0))
            text = combo.itemText(row)
            drawn = _ink_width(image, max(rect.top(), 0) + 2, min(rect.bottom(), image.height()) - 2)
            assert drawn >= 0.9 * view.fontMetrics().horizontalAdvance(text), f"{text!r} drawn {drawn} px wide"
    finally:
        combo.hidePopup()
