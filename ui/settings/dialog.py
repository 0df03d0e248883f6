"""The settings dialog: edits a copy of :class:`app.settings.model.Settings`, validated by its own pydantic models.

One tab per concern (ui/settings/general_tab.py, _llm, _devices, _bridge, _companions, _search). Every field shows its
validation message right under it and Save stays disabled while anything is invalid. Save stores the API key and
bridge token through :class:`app.settings.secrets.SecretStore` (the OS keyring, or memory for this session) and writes
the rest through the program's :class:`app.settings.store.SettingsStore`; the window then hands the new settings to
the runtime, which applies them at once. The tests (connection, voice, a companion's model and voice) are injected
coroutines, run as tasks the dialog owns, so the window never waits on them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTabWidget, QVBoxLayout, QWidget

from app.cards.checks import CompanionChecks
from app.llm.connection_check import ConnectionTester, check_connection
from app.settings.model import CompanionSettings, Settings, SettingsStore
from app.settings.secrets import SecretStore
from ui.settings.bridge_tab import BridgePage
from ui.settings.companions_tab import CompanionAccess, CompanionsPage
from ui.settings.devices_tab import DevicesPage, VoiceTester
from ui.settings.form import SettingsPage
from ui.settings.general_tab import GeneralPage
from ui.settings.llm_tab import LlmPage
from ui.settings.search_tab import SearchPage
from ui.settings.texts import text
from ui.settings.voice_input_tab import VoiceInputPage
from ui.trust.privacy_tab import PrivacyPage
from ui.window.naming import named

__all__ = ["SettingsDialog", "VoiceTester", "open_settings"]
log = logging.getLogger(__name__)


class SettingsDialog(QDialog):
    saved = Signal(object)  # the new Settings, after it was written
    connection_checked = Signal(object)  # ConnectionResult
    voice_tested = Signal(bool, str)  # ok, message
    validity_changed = Signal(bool)

    def __init__(self, settings: Settings, store: SettingsStore, *, secrets: SecretStore | None = None,
                 test_connection: ConnectionTester | None = None, test_voice: VoiceTester | None = None,
                 companions: CompanionAccess | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "settingsDialog")
        self._settings = settings
        self._store = store
        paths = store.paths
        self._secrets = secrets if secrets is not None else SecretStore.for_paths(paths)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._errors: dict[str, QLabel] = {}
        self._candidate: Settings | None = settings
        self.setWindowTitle(self._t("title"))
        self.setMinimumWidth(640)
        page_args: dict[str, Any] = {"errors": self._errors, "spawn": self._spawn}
        self.general = GeneralPage(settings.general, settings.conversation, **page_args)
        self.llm = LlmPage(settings.llm, secrets=self._secrets,
                           test_connection=test_connection or check_connection, **page_args)
        self.devices = DevicesPage(settings.camera, settings.voice, test_voice=test_voice, data_dir=paths.data_dir,
                                   **page_args)
        self.bridge = BridgePage(settings.bridge, secrets=self._secrets, **page_args)
        self.companions = CompanionsPage(settings, companions or CompanionChecks.from_files(paths),
                                         candidate=self._current, voice=self.devices.voice_settings, paths=paths,
                                         **page_args)
        if self.devices.kokoro is not None:  # Kokoro's test speaks through the app's speaker, as a companion would
            access = self.companions.access
            if access.can_speak:
                self.devices.kokoro.say = lambda voice_id, sentence: access.say(self.devices.voice_settings(),
                                                                                sentence, voice_id)
                self.devices.kokoro.show_state()
            self.devices.kokoro.ready.connect(lambda _voices: self.companions.refresh_voices())
        self.search = SearchPage(settings.search, **page_args)
        self.pages: list[SettingsPage] = [self.general, self.llm, self.devices, self.bridge, self.companions,
                                          self.search]
        self.tabs = named(QTabWidget(), "settingsTabs")
        for page, key in zip(self.pages, ("general", "llm", "devices", "bridge", "companions", "search"),
                             strict=True):
            self.tabs.addTab(page, self._t(f"tab.{key}"))
            page.changed.connect(self.revalidate)
        self.privacy = PrivacyPage(settings.trust, **page_args)  # what was allowed or refused to those outside
        self.pages.append(self.privacy)
        self.tabs.addTab(self.privacy, PrivacyPage.title())
        self.privacy.changed.connect(self.revalidate)
        self.voice_input = VoiceInputPage(settings.voice_input, paths.data_dir, **page_args)  # the microphone
        self.pages.append(self.voice_input)
        self.tabs.addTab(self.voice_input, VoiceInputPage.title())
        self.voice_input.changed.connect(self.revalidate)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = named(self.buttons.button(QDialogButtonBox.StandardButton.Save), "saveButton")
        self.save_button.setText(self._t("save"))  # Qt's own words stay English without its translations
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(self._t("cancel"))
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.save_error = named(QLabel(), "fieldError")
        self.save_error.setWordWrap(True)
        self.save_error.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.save_error)
        layout.addWidget(self.buttons)
        self.llm.connection_checked.connect(self.connection_checked)
        self.devices.voice_tested.connect(self.voice_tested)
        self._expose_fields()
        self.revalidate()

    def _expose_fields(self) -> None:
        """The fields as the dialog's own attributes (``dialog.base_url``), as callers and tests know them."""
        self.language_combo, self.theme_combo, self.user_name = (
            self.general.language_combo, self.general.theme_combo, self.general.user_name)
        self.base_url, self.api_key, self.secret_note, self.model = (
            self.llm.base_url, self.llm.api_key, self.llm.secret_note, self.llm.model)
        self.test_connection_button = self.llm.test_connection_button
        self.connection_result = self.llm.connection_result
        self.camera_source, self.preview_fps, self.voice_enabled = (
            self.devices.camera_source, self.devices.preview_fps, self.devices.voice_enabled)
        self.rate, self.volume = self.devices.rate, self.devices.volume
        self.test_voice_button, self.voice_result = self.devices.test_voice_button, self.devices.voice_result
        self.bridge_enabled, self.host, self.port, self.token, self.answerers = (
            self.bridge.bridge_enabled, self.bridge.host, self.bridge.port, self.bridge.token, self.bridge.answerers)

    def _t(self, key: str, **values: object) -> str:
        return text(key, **values)

    # --- validation --------------------------------------------------------------------------------------------

    def form_values(self) -> dict[str, Any]:
        """What the form says, section by section, as raw values for the pydantic models."""
        values: dict[str, Any] = {}
        for page in self.pages:
            for section, fields in page.values().items():  # two tabs may edit one section ([trust])
                values[section] = values.get(section, {}) | fields
        return values

    def _validate(self) -> tuple[Settings | None, dict[str, str]]:
        errors: dict[str, str] = {}
        sections: dict[str, Any] = {}
        for name, values in self.form_values().items():
            if name == "companions":
                sections[name] = self._validate_companions(values, errors)
                continue
            current: BaseModel = getattr(self._settings, name)
            try:
                sections[name] = type(current).model_validate(current.model_dump() | values)
            except ValidationError as err:
                _collect(err, name, errors)
        self.bridge.rules(errors)
        self.search.rules(errors)
        if errors:
            return None, errors
        return self._settings.model_copy(update=sections), errors

    @staticmethod
    def _validate_companions(values: dict[str, dict[str, Any]], errors: dict[str, str]) -> dict[str, Any]:
        chosen = {}
        for companion_id, choice in values.items():
            try:
                chosen[companion_id] = CompanionSettings.model_validate(choice)
            except ValidationError as err:
                _collect(err, f"companions.{companion_id}", errors)
        return chosen

    def revalidate(self) -> None:
        was_valid = self._candidate is not None
        self._candidate, errors = self._validate()
        for key, label in self._errors.items():
            message = errors.get(key, "")
            label.setText(message)
            label.setVisible(bool(message))
        for edit, key in ((self.llm.base_url, "llm.base_url"), (self.bridge.port, "bridge.port"),
                          (self.general.user_name, "general.user_name"), (self.bridge.token, "bridge.token")):
            if edit.property("invalid") != (key in errors):
                edit.setProperty("invalid", key in errors)
                edit.style().unpolish(edit)
                edit.style().polish(edit)
        self.save_button.setEnabled(self._candidate is not None)
        self.llm.show_errors(errors)
        if was_valid != (self._candidate is not None):
            self.validity_changed.emit(self._candidate is not None)

    def _current(self) -> Settings:
        """The settings the form describes (the ones passed in while it is invalid): what the tests try."""
        return self._candidate or self._settings

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
        self.llm.test_connection()

    def test_voice(self) -> None:
        self.devices.test_voice()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # shown before any loop runs (a screenshot script): nothing to wait for
            coro.close()
            return
        task = loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("settings dialog: %s failed", task.get_coro(), exc_info=task.exception())

    async def _save(self) -> None:
        self.revalidate()
        settings = self._candidate
        if settings is None:
            return
        self.save_button.setEnabled(False)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, self._secrets.store_from, settings)
            await self._store.save(settings)
        except OSError as err:
            self.save_error.setText(self._t("save_failed", error=err))
            self.save_error.show()
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


def _collect(err: ValidationError, where: str, errors: dict[str, str]) -> None:
    for e in err.errors(include_url=False):
        key = f"{where}.{e['loc'][0]}" if e["loc"] else where
        errors.setdefault(key, str(e["msg"]).removeprefix("Value error, "))


def open_settings(settings: Settings, store: SettingsStore, parent: QWidget | None = None,
                  **kwargs: Any) -> SettingsDialog:
    """Opens the dialog non-modally (the conversation keeps running behind it) and returns it."""
    dialog = SettingsDialog(settings, store, parent=parent, **kwargs)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
