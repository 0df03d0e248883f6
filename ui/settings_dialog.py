"""The settings dialog: edits a copy of :class:`app.settings.Settings`, validated by its own pydantic models.

Every field shows its validation message right under it and Save stays disabled while anything is invalid.
Save stores the API key and bridge token through :class:`app.secrets.SecretStore` (the OS keyring, or memory for
this session) and writes the rest with :func:`app.settings.save_settings`. The connection and voice tests are
injected coroutines, run as tasks the dialog owns, so the window never waits on them.
"""

from __future__ import annotations

import asyncio
import logging
import secrets as token_source
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.connection_check import ConnectionResult, ConnectionTester, check_connection
from app.secrets import SecretStore
from app.settings import DEFAULT_BRIDGE_PORT, Paths, Settings, VoiceSettings, save_settings
from ui.naming import named
from ui.query_answerers import QueryAnswerers
from ui.settings_texts import Language, text, voice_problem_text

log = logging.getLogger(__name__)
VoiceTester = Callable[[VoiceSettings, str], Awaitable[None]]  # (voice, sample sentence)
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}

class SettingsDialog(QDialog):
    saved = Signal(object)  # the new Settings, after it was written
    connection_checked = Signal(object)  # ConnectionResult
    voice_tested = Signal(bool, str)  # ok, message
    validity_changed = Signal(bool)

    def __init__(self, settings: Settings, paths: Paths, *, secrets: SecretStore | None = None,
                 test_connection: ConnectionTester | None = None, test_voice: VoiceTester | None = None,
                 language: Language | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "settingsDialog")
        self._settings = settings
        self._paths = paths
        self._secrets = secrets if secrets is not None else SecretStore()
        self._test_connection = test_connection or check_connection
        self._test_voice = test_voice
        self.language: Language = language or settings.general.language
        self._tasks: set[asyncio.Task[Any]] = set()
        self._errors: dict[str, QLabel] = {}
        self._candidate: Settings | None = settings
        self.setWindowTitle(self._t("title"))
        self.setMinimumWidth(640)
        self.tabs = named(QTabWidget(), "settingsTabs")
        self.tabs.addTab(self._general_tab(), self._t("tab.general"))
        self.tabs.addTab(self._llm_tab(), self._t("tab.llm"))
        self.tabs.addTab(self._devices_tab(), self._t("tab.devices"))
        self.tabs.addTab(self._bridge_tab(), self._t("tab.bridge"))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = named(self.buttons.button(QDialogButtonBox.StandardButton.Save), "saveButton")
        self.save_button.setText(self._t("save"))  # Qt's own words stay English without its translations
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(self._t("cancel"))
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.save_error = self._error_label("save")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.save_error)
        layout.addWidget(self.buttons)
        for edit in (self.user_name, self.base_url, self.api_key, self.camera_source, self.host, self.port, self.token):
            edit.textChanged.connect(self.revalidate)
        self.model.editTextChanged.connect(self.revalidate)
        for combo in (self.language_combo, self.theme_combo):
            combo.currentIndexChanged.connect(self.revalidate)
        self.bridge_enabled.toggled.connect(self.revalidate)
        self.voice_enabled.toggled.connect(self.revalidate)
        for spin in (self.rate, self.volume, self.preview_fps):
            spin.valueChanged.connect(self.revalidate)
        self.revalidate()

    def _t(self, key: str) -> str:
        return text(key, self.language)

    # --- building the form -------------------------------------------------------------------------------------

    def _error_label(self, key: str) -> QLabel:
        label = named(QLabel(), "fieldError")
        label.setProperty("field", key)
        label.setWordWrap(True)
        label.hide()
        self._errors[key] = label
        return label

    def _row(self, form: QFormLayout, label_key: str, widget: QWidget, field: str | None = None, *,
             hint: str | None = None, note: QLabel | None = None) -> None:
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(widget)
        if hint is not None:
            column.addWidget(named(QLabel(self._t(hint)), "fieldHint"))  # one line: wrapping breaks form heights
        if note is not None:
            column.addWidget(note)
        if field is not None:
            column.addWidget(self._error_label(field))
        label = QLabel(self._t(label_key))
        label.setBuddy(widget)
        form.addRow(label, box)

    @staticmethod
    def _form(page: QWidget) -> QFormLayout:
        form = QFormLayout(page)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        return form

    def _general_tab(self) -> QWidget:
        page = QWidget()
        form = self._form(page)
        g = self._settings.general
        self.language_combo = named(QComboBox(), "languageCombo")
        self.language_combo.addItem("日本語", "ja")
        self.language_combo.addItem("English", "en")
        self.language_combo.setCurrentIndex(self.language_combo.findData(g.language))
        self.theme_combo = named(QComboBox(), "themeCombo")
        for choice in ("system", "light", "dark"):
            self.theme_combo.addItem(self._t(f"theme.{choice}"), choice)
        self.theme_combo.setCurrentIndex(self.theme_combo.findData(g.theme))
        self.user_name = named(QLineEdit(g.user_name), "userNameEdit")
        self._row(form, "language", self.language_combo, "general.language")
        self._row(form, "theme", self.theme_combo, "general.theme")
        self._row(form, "user_name", self.user_name, "general.user_name")
        return page

    def _llm_tab(self) -> QWidget:
        page = QWidget()
        form = self._form(page)
        llm = self._settings.llm
        self.base_url = named(QLineEdit(llm.base_url or ""), "baseUrlEdit")
        self.base_url.setPlaceholderText("http://127.0.0.1:11434/v1")
        self.api_key = named(QLineEdit(llm.api_key.get_secret_value() if llm.api_key else ""), "apiKeyEdit")
        self.api_key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.api_key.setPlaceholderText("sk-…")
        self.secret_note = named(QLabel(self._t("key.keyring" if self._secrets.persistent else "key.session")),
                                 "secretNote")
        self.secret_note.setWordWrap(True)
        self.secret_note.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.model = named(QComboBox(), "modelCombo")
        self.model.setEditable(True)
        self.model.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.model.setEditText(llm.model or "")
        self.test_connection_button = named(QPushButton(self._t("test_connection")), "testConnectionButton")
        self.test_connection_button.clicked.connect(self.test_connection)
        self.connection_result = named(QLabel(), "connectionResult")
        self.connection_result.setWordWrap(True)
        test_row = QWidget()
        row = QHBoxLayout(test_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.test_connection_button)
        row.addWidget(self.connection_result, 1)
        self._row(form, "base_url", self.base_url, "llm.base_url", hint="base_url.hint")
        self._row(form, "api_key", self.api_key, "llm.api_key", note=self.secret_note)
        self._row(form, "model", self.model, "llm.model", hint="model.hint")
        form.addRow("", test_row)
        return page

    def _devices_tab(self) -> QWidget:
        page = QWidget()
        form = self._form(page)
        camera, voice = self._settings.camera, self._settings.voice
        self.camera_source = named(QLineEdit(camera.source), "cameraSourceEdit")
        self.preview_fps = named(QDoubleSpinBox(), "previewFpsSpin")
        self.preview_fps.setRange(1, 60)
        self.preview_fps.setValue(camera.preview_fps)
        self.voice_enabled = named(QCheckBox(self._t("voice_enabled")), "voiceEnabledCheck")
        self.voice_enabled.setChecked(voice.enabled)
        self.rate = named(QSpinBox(), "rateSpin")
        self.rate.setRange(50, 400)
        self.rate.setValue(voice.rate)
        self.volume = named(QSpinBox(), "volumeSpin")
        self.volume.setRange(0, 100)
        self.volume.setSuffix(" %")
        self.volume.setValue(round(voice.volume * 100))
        self.test_voice_button = named(QPushButton(self._t("test_voice")), "testVoiceButton")
        self.test_voice_button.clicked.connect(self.test_voice)
        self.test_voice_button.setEnabled(self._test_voice is not None)
        self.voice_result = named(QLabel("" if self._test_voice else self._t("voice.none")), "voiceResult")
        test_row = QWidget()
        row = QHBoxLayout(test_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.test_voice_button)
        row.addWidget(self.voice_result, 1)
        self._row(form, "camera_source", self.camera_source, "camera.source", hint="camera_source.hint")
        self._row(form, "preview_fps", self.preview_fps, "camera.preview_fps")
        form.addRow("", self.voice_enabled)
        self._row(form, "rate", self.rate, "voice.rate")
        self._row(form, "volume", self.volume, "voice.volume")
        form.addRow("", test_row)
        return page

    def _bridge_tab(self) -> QWidget:
        page = QWidget()
        form = self._form(page)
        bridge = self._settings.bridge
        self.bridge_enabled = named(QCheckBox(self._t("bridge_enabled")), "bridgeEnabledCheck")
        self.bridge_enabled.setChecked(bridge.enabled)
        self.host = named(QLineEdit(bridge.host), "bridgeHostEdit")
        self.port = named(QLineEdit(str(bridge.port if bridge.enabled else DEFAULT_BRIDGE_PORT)), "bridgePortEdit")
        self.token = named(QLineEdit(bridge.token.get_secret_value() if bridge.token else ""), "bridgeTokenEdit")
        self.token.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        generate = named(QPushButton(self._t("generate")), "generateTokenButton")
        generate.clicked.connect(self.generate_token)
        token_row = QWidget()
        row = QHBoxLayout(token_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.token, 1)
        row.addWidget(generate)
        form.addRow("", self.bridge_enabled)
        self._row(form, "host", self.host, "bridge.host")
        self._row(form, "port", self.port, "bridge.port")
        self._row(form, "token", token_row, "bridge.token")
        self.answerers = QueryAnswerers(bridge, self.language)  # who answers vision and speak queries
        form.addRow("", self.answerers)
        for widget in (self.host, self.port, token_row):
            widget.setEnabled(bridge.enabled)
            self.bridge_enabled.toggled.connect(widget.setEnabled)
        return page

    # --- validation --------------------------------------------------------------------------------------------

    def form_values(self) -> dict[str, dict[str, Any]]:
        """What the form says, section by section, as raw values for the pydantic models."""
        return {
            "general": {"language": self.language_combo.currentData(), "theme": self.theme_combo.currentData(),
                        "user_name": self.user_name.text().strip()},
            "llm": {"base_url": self.base_url.text().strip() or None, "model": self.model.currentText().strip() or None,
                    "api_key": self.api_key.text().strip() or None},
            "camera": {"source": self.camera_source.text().strip(), "preview_fps": self.preview_fps.value()},
            "voice": {"enabled": self.voice_enabled.isChecked(), "rate": self.rate.value(),
                      "volume": self.volume.value() / 100},
            "bridge": {"host": self.host.text().strip(),
                       "port": self.port.text().strip() if self.bridge_enabled.isChecked() else 0,
                       "token": self.token.text().strip() or None,
                       "client_answers": self.answerers.client_answers()},
        }

    def _validate(self) -> tuple[Settings | None, dict[str, str]]:
        errors: dict[str, str] = {}
        sections: dict[str, BaseModel] = {}
        for name, values in self.form_values().items():
            current: BaseModel = getattr(self._settings, name)
            try:
                sections[name] = type(current).model_validate(current.model_dump() | values)
            except ValidationError as err:
                for e in err.errors(include_url=False):
                    key = f"{name}.{e['loc'][0]}" if e["loc"] else name
                    errors.setdefault(key, str(e["msg"]).removeprefix("Value error, "))
        if self.bridge_enabled.isChecked():
            if "bridge.port" not in errors and self.port.text().strip() == "0":
                errors["bridge.port"] = self._t("err.port_off")
            if self.host.text().strip() not in LOOPBACK_HOSTS and not self.token.text().strip():
                errors["bridge.token"] = self._t("err.token")
        if errors:
            return None, errors
        return self._settings.model_copy(update=sections), errors

    def revalidate(self) -> None:
        was_valid = self._candidate is not None
        self._candidate, errors = self._validate()
        for key, label in self._errors.items():
            if key == "save":
                continue
            message = errors.get(key, "")
            label.setText(message)
            label.setVisible(bool(message))
        for edit, key in ((self.base_url, "llm.base_url"), (self.port, "bridge.port"), (self.user_name,
                          "general.user_name"), (self.token, "bridge.token")):
            if edit.property("invalid") != (key in errors):
                edit.setProperty("invalid", key in errors)
                edit.style().unpolish(edit)
                edit.style().polish(edit)
        self.save_button.setEnabled(self._candidate is not None)
        self.test_connection_button.setEnabled(bool(self.base_url.text().strip()) and "llm.base_url" not in errors)
        if was_valid != (self._candidate is not None):
            self.validity_changed.emit(self._candidate is not None)

    @property
    def is_valid(self) -> bool:
        return self._candidate is not None

    def field_error(self, key: str) -> str:
        """The message shown under field ``key`` (``"llm.base_url"``), or ``""``."""
        label = self._errors[key]
        return "" if label.isHidden() else label.text()

    # --- actions -----------------------------------------------------------------------------------------------
    # Slots are bound methods, never lambdas capturing self: a lambda makes a reference cycle through Qt, and the
    # garbage collector may then destroy the dialog's widgets from whatever thread happens to run it (a crash).

    def save(self) -> None:
        self._spawn(self._save())

    def test_connection(self) -> None:
        self._spawn(self._run_connection_test())

    def test_voice(self) -> None:
        self._spawn(self._run_voice_test())

    def generate_token(self) -> None:
        self.token.setText(token_source.token_urlsafe(24))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("settings dialog: %s failed", task.get_coro(), exc_info=task.exception())

    def _show_result(self, label: QLabel, state: str, message: str) -> None:
        label.setProperty("result", state)
        label.setText(message)
        label.style().unpolish(label)
        label.style().polish(label)

    async def _run_connection_test(self) -> None:
        url = self.base_url.text().strip()
        if not url:
            self._show_result(self.connection_result, "error", self._t("need_url"))
            return
        self.test_connection_button.setEnabled(False)
        self._show_result(self.connection_result, "busy", self._t("testing"))
        try:
            result = await self._test_connection(url, self.api_key.text().strip() or None)
        except Exception as err:  # an injected tester that raises is still a result for the user
            result = ConnectionResult(ok=False, error=f"{type(err).__name__}: {err}")
        finally:
            self.test_connection_button.setEnabled(True)
        if self.language == "en":
            shown = result.summary
        elif result.ok:
            shown = self._t("conn.ok").format(n=result.model_count)
        else:
            shown = self._t("conn.failed").format(error=result.error)
        self._show_result(self.connection_result, "ok" if result.ok else "error", shown)
        if result.ok and result.models:
            typed = self.model.currentText()
            self.model.clear()
            self.model.addItems(result.models)
            self.model.setEditText(typed or result.models[0])
        self.connection_checked.emit(result)

    async def _run_voice_test(self) -> None:
        if self._test_voice is None:
            return
        voice = VoiceSettings(enabled=True, rate=self.rate.value(), volume=self.volume.value() / 100)
        self.test_voice_button.setEnabled(False)
        self._show_result(self.voice_result, "busy", self._t("testing"))
        reason = ""
        try:
            await self._test_voice(voice, self._t("voice.sample"))
            ok, message = True, self._t("voice.ok")
        except Exception as err:  # no audio device is a message, not a crash
            reason = str(err) or type(err).__name__
            ok, message = False, voice_problem_text(reason, self.language)
        finally:
            self.test_voice_button.setEnabled(True)
        self.voice_result.setToolTip(reason)  # the speaker's own words, for whoever helps
        self._show_result(self.voice_result, "ok" if ok else "error", message)
        self.voice_tested.emit(ok, message)

    async def _save(self) -> None:
        self.revalidate()
        settings = self._candidate
        if settings is None:
            return
        self.save_button.setEnabled(False)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, self._secrets.store_from, settings)
            await loop.run_in_executor(None, save_settings, settings, self._paths)
        except OSError as err:
            self._errors["save"].setText(self._t("save_failed").format(error=err))
            self._errors["save"].show()
            self.save_button.setEnabled(True)
            return
        self._settings = settings
        self.saved.emit(settings)
        self.accept()

    @property
    def result_settings(self) -> Settings:
        """The last saved settings (the ones passed in until Save succeeds)."""
        return self._settings

    def done(self, result: int) -> None:
        for task in list(self._tasks):
            if task is not asyncio.current_task():
                task.cancel()  # a test still running must not touch a closed dialog
        super().done(result)


def open_settings(settings: Settings, paths: Paths, parent: QWidget | None = None, **kwargs: Any) -> SettingsDialog:
    """Opens the dialog non-modally (the conversation keeps running behind it) and returns it."""
    dialog = SettingsDialog(settings, paths, parent=parent, **kwargs)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
