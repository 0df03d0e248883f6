"""The settings dialog's Language model tab: the default endpoint, its API key and model, and the connection test
(``GET /models`` through the real openai client, run as a task the dialog owns)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QSizePolicy

from app.llm.connection_check import ConnectionResult, ConnectionTester
from app.settings.model import LLMSettings
from app.settings.secrets import SecretStore
from ui.settings.form import SettingsPage, Spawn, button_row, show_result
from ui.window.naming import named


def secret_note(page: SettingsPage, what: str, secrets: SecretStore) -> QLabel:
    """Where a secret saved on this page goes (``what``: ``key`` or ``token``): the keyring, or the file only the
    user can read (named), or this session only when even that file cannot be written."""
    note = named(QLabel(page.t(f"{what}.{secrets.where}", path=secrets.fallback_file)), "secretNote")
    note.setWordWrap(True)
    note.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    return note


class LlmPage(SettingsPage):
    connection_checked = Signal(object)  # ConnectionResult

    def __init__(self, llm: LLMSettings, *, secrets: SecretStore, test_connection: ConnectionTester,
                 errors: dict[str, QLabel], spawn: Spawn) -> None:
        super().__init__(errors, spawn)
        self._test_connection = test_connection
        form = self.form()
        self.base_url = named(QLineEdit(llm.base_url or ""), "baseUrlEdit")
        self.base_url.setPlaceholderText("http://127.0.0.1:11434/v1")
        self.api_key = named(QLineEdit(llm.api_key.get_secret_value() if llm.api_key else ""), "apiKeyEdit")
        self.api_key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.api_key.setPlaceholderText("sk-…")
        self.secret_note = secret_note(self, "key", secrets)
        self.model = named(QComboBox(), "modelCombo")
        self.model.setEditable(True)
        self.model.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.model.setEditText(llm.model or "")
        self.test_connection_button = named(QPushButton(self.t("test_connection")), "testConnectionButton")
        self.test_connection_button.clicked.connect(self.test_connection)
        self.connection_result = named(QLabel(), "connectionResult")
        self.connection_result.setWordWrap(True)
        self.row(form, "base_url", self.base_url, "llm.base_url", hint="base_url.hint")
        self.row(form, "api_key", self.api_key, "llm.api_key", note=self.secret_note)
        self.row(form, "model", self.model, "llm.model", hint="model.hint")
        form.addRow("", button_row(self.test_connection_button, self.connection_result))
        self.changed_signal(self.base_url.textChanged, self.api_key.textChanged, self.model.editTextChanged)

    def values(self) -> dict[str, dict[str, Any]]:
        return {"llm": {"base_url": self.base_url.text().strip() or None,
                        "model": self.model.currentText().strip() or None,
                        "api_key": self.api_key.text().strip() or None}}

    def show_errors(self, errors: dict[str, str]) -> None:
        self.test_connection_button.setEnabled(bool(self.base_url.text().strip()) and "llm.base_url" not in errors)

    def test_connection(self) -> None:
        self._spawn(self._run_connection_test())

    async def _run_connection_test(self) -> None:
        url = self.base_url.text().strip()
        if not url:
            show_result(self.connection_result, "error", self.t("need_url"))
            return
        self.test_connection_button.setEnabled(False)
        show_result(self.connection_result, "busy", self.t("testing"))
        try:
            result = await self._test_connection(url, self.api_key.text().strip() or None)
        except Exception as err:  # an injected tester that raises is still a result for the user
            result = ConnectionResult(ok=False, error=f"{type(err).__name__}: {err}")
        finally:
            self.test_connection_button.setEnabled(True)
        # "OK: 1 model" in Qt's plural forms, in either language
        shown = self.t("conn.ok", n=result.model_count) if result.ok else self.t("conn.failed", error=result.error)
        show_result(self.connection_result, "ok" if result.ok else "error", shown)
        if result.ok and result.models:
            typed = self.model.currentText()
            self.model.clear()
            self.model.addItems(result.models)
            self.model.setEditText(typed or result.models[0])
        self.connection_checked.emit(result)
