"""The settings dialog's General tab: the interface language, the theme, the user's name, and when the companions
may speak first (``[conversation] speak_first_*``: companions/conversation/speaking_first.py)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit, QSpinBox

from app.settings.model import GeneralSettings
from app.settings.sections import ConversationSettings
from ui.settings.form import SettingsPage, Spawn
from ui.window.naming import named


class GeneralPage(SettingsPage):
    def __init__(self, general: GeneralSettings, conversation: ConversationSettings, errors: dict[str, QLabel],
                 spawn: Spawn) -> None:
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
        # Speaking first: after a silence (0: never, the default), and on what noticing saw (when it is on).
        self.silence_spin = named(QSpinBox(), "speakFirstAfterSpin")
        self.silence_spin.setRange(0, 24 * 60)
        self.silence_spin.setSuffix(self.t("speak_first.minutes"))
        self.silence_spin.setSpecialValueText(self.t("speak_first.never"))
        self.silence_spin.setValue(conversation.speak_first_after_min)
        self.on_notice_check = named(QCheckBox(self.t("speak_first.on_notice")), "speakFirstOnNoticeCheck")
        self.on_notice_check.setChecked(conversation.speak_first_on_notice)
        self.row(form, "speak_first.after", self.silence_spin, "conversation.speak_first_after_min",
                 hint="speak_first.hint")
        form.addRow("", self.on_notice_check)
        self.changed_signal(self.language_combo.currentIndexChanged, self.theme_combo.currentIndexChanged,
                            self.user_name.textChanged, self.silence_spin.valueChanged, self.on_notice_check.toggled)

    def values(self) -> dict[str, dict[str, Any]]:
        return {"general": {"language": self.language_combo.currentData(), "theme": self.theme_combo.currentData(),
                            "user_name": self.user_name.text().strip()},
                "conversation": {"speak_first_after_min": self.silence_spin.value(),
                                 "speak_first_on_notice": self.on_notice_check.isChecked()}}
