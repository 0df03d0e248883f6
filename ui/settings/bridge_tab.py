"""The settings dialog's Bridge tab: whether other programs may join over WebSocket, where the bridge listens, its
access token, the web pages it admits (``bridge.allowed_origins``, app/bridge/origins.py), and who answers camera
and voice queries (ui/settings/query_answerers.py)."""

from __future__ import annotations

import re
import secrets as token_source
from typing import Any, Final

from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.settings.model import DEFAULT_BRIDGE_PORT, BridgeSettings
from app.settings.secrets import SecretStore
from ui.settings.form import SettingsPage, Spawn, button_row
from ui.settings.llm_tab import secret_note
from ui.settings.query_answerers import QueryAnswerers
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

LOOPBACK_HOSTS: Final = {"127.0.0.1", "localhost", "::1"}
_TEXTS: Final = Texts("settings_bridge", {
    "origins": QT_TRANSLATE_NOOP("settings_bridge", "Web pages allowed"),
    "origins.hint": QT_TRANSLATE_NOOP(
        "settings_bridge", "One per line, e.g. http://localhost:5173 (:* for any port). Pages from elsewhere "
        "cannot connect; programs that are not web pages are not concerned."),
})


class BridgePage(SettingsPage):
    def __init__(self, bridge: BridgeSettings, errors: dict[str, QLabel], spawn: Spawn,
                 secrets: SecretStore | None = None) -> None:
        super().__init__(errors, spawn)
        form = self.form()
        self.bridge_enabled = named(QCheckBox(self.t("bridge_enabled")), "bridgeEnabledCheck")
        self.bridge_enabled.setChecked(bridge.enabled)
        self.host = named(QLineEdit(bridge.host), "bridgeHostEdit")
        self.port = named(QLineEdit(str(bridge.port if bridge.enabled else DEFAULT_BRIDGE_PORT)), "bridgePortEdit")
        self.token = named(QLineEdit(bridge.token.get_secret_value() if bridge.token else ""), "bridgeTokenEdit")
        self.token.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        generate = named(QPushButton(self.t("generate")), "generateTokenButton")
        generate.clicked.connect(self.generate_token)
        token_row = button_row(self.token, generate, stretch_last=False)
        form.addRow("", self.bridge_enabled)
        self.row(form, "host", self.host, "bridge.host")
        self.row(form, "port", self.port, "bridge.port")
        self.token_note = secret_note(self, "token", secrets) if secrets is not None else None
        self.row(form, "token", token_row, "bridge.token", note=self.token_note)
        self.origins = named(QPlainTextEdit("\n".join(bridge.allowed_origins)), "bridgeOriginsEdit")
        self.origins.setTabChangesFocus(True)
        self.origins.setFixedHeight(4 * self.origins.fontMetrics().lineSpacing() + 12)
        self.origins.setAccessibleName(_TEXTS.text("origins"))
        self.origins_row = self.origin_row(form)
        self.answerers = QueryAnswerers(bridge)  # who answers vision and speak queries
        form.addRow("", self.answerers)
        for widget in (self.host, self.port, token_row, self.origins):
            widget.setEnabled(bridge.enabled)
            self.bridge_enabled.toggled.connect(widget.setEnabled)
        self.changed_signal(self.bridge_enabled.toggled, self.host.textChanged, self.port.textChanged,
                            self.token.textChanged, self.origins.textChanged)

    def origin_row(self, form: QFormLayout) -> QLabel:
        """The row of the allowed web pages, its hint and the field's error under it; returns the row's label."""
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        hint = named(QLabel(_TEXTS.text("origins.hint", self.language)), "fieldHint")
        hint.setWordWrap(True)
        for widget in (self.origins, hint, self.error_label("bridge.allowed_origins")):
            column.addWidget(widget)
        label = QLabel(_TEXTS.text("origins", self.language))
        label.setBuddy(self.origins)
        form.addRow(label, box)
        return label

    def allowed_origins(self) -> list[str]:
        """The origins the form lists (one per line; commas and spaces separate them too)."""
        return [o for o in re.split(r"[\s,]+", self.origins.toPlainText()) if o]

    def generate_token(self) -> None:
        self.token.setText(token_source.token_urlsafe(24))

    def values(self) -> dict[str, dict[str, Any]]:
        return {"bridge": {"host": self.host.text().strip(),
                           "port": self.port.text().strip() if self.bridge_enabled.isChecked() else 0,
                           "token": self.token.text().strip() or None,
                           "client_answers": self.answerers.client_answers(),
                           "allowed_origins": self.allowed_origins()}}

    def rules(self, errors: dict[str, str]) -> None:
        """The rules beyond each field's own: a port when the bridge is on, a token beyond this computer."""
        if not self.bridge_enabled.isChecked():
            return
        if "bridge.port" not in errors and self.port.text().strip() == "0":
            errors["bridge.port"] = self.t("err.port_off")
        if self.host.text().strip() not in LOOPBACK_HOSTS and not self.token.text().strip():
            errors["bridge.token"] = self.t("err.token")
