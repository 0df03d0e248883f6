"""Everything around the main window's panels in one object, so the window needs only a few lines to get it:
the theme, the Settings action and dialog, error notifications, and the first-run panel in the chat area.
"""

from __future__ import annotations

import logging
from typing import Final

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow, QStackedWidget

from app.llm.connection_check import ConnectionTester, llm_configured
from app.runtime.error_reporting import ErrorReporter
from app.settings.model import Settings, SettingsStore
from app.settings.secrets import SecretStore
from companions.common.tasks import TaskSet
from ui.chat.panel import ChatPanel
from ui.chat.texts import chat_text
from ui.settings.companions_tab import CompanionAccess
from ui.settings.dialog import SettingsDialog, VoiceTester
from ui.settings.form import show_result
from ui.window.about import about_action, about_action_text
from ui.window.filler_notice import FillerNotice
from ui.window.first_run import SPEAK_FIRST_MIN, FirstRunPanel
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts, use_language, window_language
from ui.window.naming import named
from ui.window.notifications import NotificationArea
from ui.window.theme import ThemeManager, apply_theme

_TEXTS: Final = Texts("desktop_extras", {
    "menu": QT_TRANSLATE_NOOP("desktop_extras", "&Madoi"),
    "settings": QT_TRANSLATE_NOOP("desktop_extras", "&Settings…"),
    "saved.title": QT_TRANSLATE_NOOP("desktop_extras", "Settings saved"),
    "saved.body": QT_TRANSLATE_NOOP("desktop_extras", "In effect now (turning speech on or off takes a restart)."),
    "can_send": QT_TRANSLATE_NOOP("desktop_extras", "The companions have a language model now: press Enter to send."),
    "not_saved.title": QT_TRANSLATE_NOOP("desktop_extras", "Settings not saved"),
    "not_saved.body": QT_TRANSLATE_NOOP("desktop_extras", "{reason}. Your choice holds until Madoi closes."),
})

log = logging.getLogger(__name__)


class DesktopExtras(QObject):
    settings_saved = Signal(object)  # Settings

    def __init__(self, window: QMainWindow, settings: Settings, store: SettingsStore, *,
                 secrets: SecretStore | None = None, reporter: ErrorReporter | None = None,
                 test_connection: ConnectionTester | None = None, test_voice: VoiceTester | None = None,
                 companions: CompanionAccess | None = None) -> None:
        super().__init__(window)
        self._window = window
        self.settings = settings
        self._store = store  # the Settings dialog saves through it
        self._secrets = secrets
        self._test_connection = test_connection
        self._test_voice = test_voice
        self._companions = companions  # the Companions tab's port onto the running app
        self.dialog: SettingsDialog | None = None
        self._tasks = TaskSet("desktop-extras")
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        self.theme: ThemeManager = apply_theme(app, settings.general.theme)
        self.notifications = NotificationArea(window)
        if reporter is not None:
            reporter.add_callback(self.notifications.report_error)
        self.settings_action = named(QAction(self._t("settings"), window), "settingsAction")
        # The platform's Preferences key where it has one (Cmd+, on macOS); Ctrl+, elsewhere (Linux has none).
        keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Preferences) or [QKeySequence("Ctrl+,")]
        self.settings_action.setShortcuts(keys)
        self.settings_action.triggered.connect(self.open_settings)
        self.menu = window.menuBar().addMenu(self._t("menu"))
        self.menu.addAction(self.settings_action)
        window.addAction(self.settings_action)  # the shortcut works even with the menu bar hidden
        self.about_action = about_action(window)  # the credits a licence asks for (Open JTalk's voice Mei)
        self.menu.addAction(self.about_action)
        # After repeated stock fillers, a larger model is suggested (attached to the bus by the window).
        self.filler_notice = FillerNotice(self.notifications.notify, self.open_model_settings, self)
        self.first_run = FirstRunPanel()
        self.first_run.open_settings_requested.connect(self.open_model_settings)
        self.first_run.set_speak_first(settings.conversation.speak_first_after_min > 0)
        self.first_run.speak_first_chosen.connect(self._speak_first_chosen)
        self.chat_stack: QStackedWidget | None = None
        self._chat: ChatPanel | None = None

    def _t(self, key: str) -> str:
        return _TEXTS.text(key)

    def retranslate(self) -> None:
        """The Madoi menu's words again (the window calls it on LanguageChange)."""
        self.menu.setTitle(self._t("menu"))
        self.settings_action.setText(self._t("settings"))
        self.about_action.setText(about_action_text())

    def wrap_chat(self, chat: ChatPanel) -> ChatPanel:
        """The chat area: its transcript gives way to the first-run panel until a model is configured; the message
        box stays below it (Ctrl+3 reaches it, and a message written meanwhile is there once a model answers)."""
        stack = named(QStackedWidget(), "chatStack")
        layout = chat.layout()
        assert layout is not None
        layout.replaceWidget(chat.view, stack)
        stack.addWidget(chat.view)
        stack.addWidget(self.first_run)
        self.chat_stack = stack
        # Sending waits for a model: the words stay in the box with the reason, instead of votes failing unseen.
        chat.input.submit_requested.disconnect(chat.submit)
        chat.send_button.clicked.disconnect(chat.submit)
        chat.input.submit_requested.connect(self._submit)
        chat.send_button.clicked.connect(self._submit)
        self._chat = chat
        self.show_first_run(not llm_configured(self.settings))
        return chat

    def show_first_run(self, show: bool, problem: str | None = None) -> None:
        """Shows the first-run panel (with the reason the model is unreachable) or the chat's transcript."""
        self.first_run.set_problem(problem if show else None)
        if show:
            secrets = self._secrets if self._secrets is not None else SecretStore.for_paths(self._store.paths)
            self.first_run.set_key_place(secrets.where)
        if self.chat_stack is not None:
            was_shown = self.chat_stack.currentIndex() == 1
            self.chat_stack.setCurrentIndex(1 if show else 0)  # 0: the transcript, 1: this panel (see wrap_chat)
            if was_shown and not show:
                self._model_arrived()

    def _model_arrived(self) -> None:
        """A message refused for want of a model ("Not sent ...", in red) can go now: the box says so instead."""
        chat = self._chat
        if chat is None or not chat.error.isVisible() or chat.error.property("waiting_for_model") is not True:
            return
        chat.error.setProperty("waiting_for_model", False)
        show_result(chat.error, "ok", self._t("can_send"))

    def _submit(self) -> None:
        chat = self._chat
        assert chat is not None
        assert self.chat_stack is not None
        if chat.error.property("result") != "error":  # the note that a model arrived: errors are red again
            chat.error.setProperty("waiting_for_model", False)
            show_result(chat.error, "error", chat.error.text())
        if self.chat_stack.currentWidget() is not self.first_run or not chat.input.toPlainText().strip():
            chat.submit()
            return
        show_result(chat.error, "error",
                    chat_text("send_failed", error=chat_text("no_model")))
        chat.error.setProperty("waiting_for_model", True)
        chat.error.show()

    def open_model_settings(self) -> SettingsDialog:
        """Opens the dialog at its Language model tab (the first-run card's "Open settings…")."""
        dialog = self.open_settings()
        dialog.tabs.setCurrentWidget(dialog.llm)
        return dialog

    def open_speech_model_download(self, choice: str) -> SettingsDialog:
        """Opens the dialog at its Voice input tab with the recognizer ``choice`` chosen, asking to download it
        (the microphone's offer when the user's words were not understood)."""
        dialog = self.open_settings()
        dialog.tabs.setCurrentWidget(dialog.voice_input)
        dialog.voice_input.offer(choice)
        return dialog

    def open_settings(self) -> SettingsDialog:
        """Opens the dialog (non-modal), or brings the open one to the front."""
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            self.dialog.activateWindow()
            return self.dialog
        dialog = SettingsDialog(self.settings, self._store, secrets=self._secrets,
                                test_connection=self._test_connection, test_voice=self._test_voice,
                                companions=self._companions, parent=self._window)
        dialog.saved.connect(self._saved)
        dialog.finished.connect(self._dialog_finished)
        dialog.show()
        self.dialog = dialog
        return dialog

    def _dialog_finished(self) -> None:
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    def _speak_first_chosen(self, on: bool) -> None:
        """The first-run card's offer: speak first after :data:`SPEAK_FIRST_MIN` minutes of silence, or never;
        saved (and applied) as the dialog's Save would."""
        settings = self.settings.model_copy(deep=True)
        settings.conversation.speak_first_after_min = SPEAK_FIRST_MIN if on else 0
        self._tasks.spawn(self._save_elsewhere(settings), name="save-speak-first")

    async def _save_elsewhere(self, settings: Settings) -> None:
        try:
            await self._store.save(settings)
        except OSError as err:  # the choice holds for this run
            log.warning("settings not saved: %s", err)
            self.notifications.notify(self._t("not_saved.title"), self._t("not_saved.body").format(reason=err),
                                      "error")
        self.saved_elsewhere(settings)

    def saved_elsewhere(self, settings: Settings) -> None:
        """Settings written by another part of the window (the companion editor, a card approved): the dialog
        opens on them next time, and the window applies them as after Save."""
        self._saved(settings)

    def _saved(self, settings: Settings) -> None:
        self.settings = settings
        self.theme.apply(settings.general.theme)
        if settings.general.language != window_language():
            use_language(settings.general.language)  # before the notification below, which says it in that language
        self.show_first_run(not llm_configured(settings))
        self.notifications.notify(self._t("saved.title"), self._t("saved.body"), "info")
        self.settings_saved.emit(settings)
