"""The settings dialog's General tab: the interface language, the theme and the user's name."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit

from app.settings.model import GeneralSettings
from ui.settings.form import SettingsPage, Spawn
from ui.window.naming import named


class GeneralPage(SettingsPage):
    def __init__(self, general: GeneralSettings, errors: dict[str, QLabel], spawn: Spawn) -> None:
        super().__init__(errors, spawn)
        form = self.form()
        self.language_combo = named(QComboBox(), "languageCombo")
        self.language_combo.addItem("日本語", "ja")
        self.language_combo.addItem("English", "en")
        self.language_combo.setCurrentIndex(self.language_combo.findData(general.language))
        self.theme_combo = named(QComboBox(), "themeCombo")
        for choice in ("system", "light", "dark"):
            self.theme_combo.addItem(self.t(f"theme.{choice}"), choice)
        self.theme_combo.setCurrentIndex(self.theme_combo.findData(general.theme))
        self.user_name = named(QLineEdit(general.user_name), "userNameEdit")
        self.row(form, "language", self.language_combo, "general.language")
        self.row(form, "theme", self.theme_combo, "general.theme")
        self.row(form, "user_name", self.user_name, "general.user_name")
        self.changed_signal(self.language_combo.currentIndexChanged, self.theme_combo.currentIndexChanged,
                            self.user_name.textChanged)

    def values(self) -> dict[str, dict[str, Any]]:
        return {"general": {"language": self.language_combo.currentData(), "theme": self.theme_combo.currentData(),
                            "user_name": self.user_name.text().strip()}}
