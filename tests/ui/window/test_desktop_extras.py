"""The extras around the real main window: first run until a model is set, the Settings action, notifications."""

from __future__ import annotations

import asyncio
from pathlib import Path

import keyring.backends.fail
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.runtime.error_reporting import ErrorReporter
from app.settings.secrets import SecretStore
from tests.ui.conftest import signal_fired, started_runtime
from ui.window.desktop_extras import DesktopExtras
from ui.window.main_window import MainWindow
from ui.window.theme import theme_manager


async def test_first_run_until_an_endpoint_is_saved_then_the_chat(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
        qtbot.addWidget(window)
        extras = window.extras
        window.show()
        try:
            assert extras.chat_stack is not None
            assert extras.chat_stack.currentWidget() is extras.first_run
            assert extras.first_run.isVisible()
            assert not window.chat.view.isVisible()
            assert window.chat.input.isVisible()  # the message box stays
            extras.first_run.open_button.click()
            dialog = extras.dialog
            assert dialog is not None
            assert dialog.isVisible()
            assert extras.open_settings() is dialog  # a second request raises the same dialog
            dialog.base_url.setText("http://127.0.0.1:11434/v1")
            dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
            async with signal_fired(extras.notifications.shown):
                dialog.save_button.click()
            assert extras.chat_stack.currentWidget() is window.chat.view
            assert window.chat.view.isVisible()
            assert extras.settings.llm.base_url == "http://127.0.0.1:11434/v1"
            assert extras.theme.scheme == "dark"
            assert extras.notifications.history[-1].level == "info"
            assert extras.dialog is None  # closed and released
        finally:
            app = QApplication.instance()
            assert isinstance(app, QApplication)
            theme_manager(app).reset()
            window.close()


async def test_the_settings_action_has_the_preferences_shortcut_and_errors_become_toasts(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        reporter = ErrorReporter().install(asyncio.get_running_loop())
        try:
            extras = DesktopExtras(window, runtime.settings, runtime.loaded, reporter=reporter,
                                   secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
            window.show()
            assert not extras.settings_action.shortcut().isEmpty()
            assert extras.settings_action in window.actions()
            extras.settings_action.trigger()
            assert extras.dialog is not None
            assert extras.dialog.isVisible()
            extras.dialog.reject()
            async with signal_fired(extras.notifications.shown):
                reporter.report(RuntimeError("camera unplugged"), "thread camera")
            assert extras.notifications.visible_toasts[-1].notification.text.startswith(
                "RuntimeError: camera unplugged")
        finally:
            reporter.uninstall()
            app = QApplication.instance()
            assert isinstance(app, QApplication)
            theme_manager(app).reset()
            window.close()
