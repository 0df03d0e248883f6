"""The first-run panel: shown in the chat area while no language model is configured or reachable.

It explains the two ways to give the companions a voice of their own (a local server, or an API key), shows
why the last connection attempt failed, and offers to open the settings. Everything else keeps working meanwhile.
"""

from __future__ import annotations

import html
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from ui.i18n import QT_TRANSLATE_NOOP, Texts
from ui.naming import named
from ui.settings_texts import Language

TEXTS: Final = Texts("first_run", {
    "title": QT_TRANSLATE_NOOP("first_run", "Let's connect a language model"),
    "intro": QT_TRANSLATE_NOOP(
        "first_run", "The companions need a language model to think and talk. Camera, voice and search already work; "
                     "choose one of these and enter it in the settings:"),
    "local.title": QT_TRANSLATE_NOOP("first_run", "A local server — free, private, no key"),
    "local.body": QT_TRANSLATE_NOOP(
        "first_run", "<b>Ollama</b>: install it, run <code>ollama pull qwen2.5:3b</code>, endpoint "
                     "<code>http://127.0.0.1:11434/v1</code><br><b>LM Studio</b>: load a model and start the local "
                     "server, endpoint <code>http://127.0.0.1:1234/v1</code><br><b>llama.cpp</b>: <code>llama-server "
                     "-m model.gguf</code>, endpoint <code>http://127.0.0.1:8080/v1</code>"),
    "cloud.title": QT_TRANSLATE_NOOP("first_run", "An API key from an OpenAI-compatible service"),
    "cloud.body": QT_TRANSLATE_NOOP(
        "first_run", "Enter the service's endpoint (e.g. <code>https://api.openai.com/v1</code>) and your key. The "
                     "key is stored in the system keyring, never in the settings file."),
    "open_settings": QT_TRANSLATE_NOOP("first_run", "Open settings…"),
    "retry": QT_TRANSLATE_NOOP("first_run", "Check again"),
    "problem": QT_TRANSLATE_NOOP("first_run", "Last attempt: {problem}"),
    "not_found": QT_TRANSLATE_NOOP(
        "first_run", "No model server answered on this machine (Ollama, LM Studio, llama.cpp at the addresses "
                     "above). Start one, or enter an endpoint in the settings."),
})



NOT_FOUND = "<not found>"
"""A problem of its own: no endpoint configured and no local server answered (said in the user's language)."""


class FirstRunPanel(QWidget):
    open_settings_requested = Signal()
    retry_requested = Signal()

    def __init__(self, language: Language = "ja", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "firstRunPanel")
        self.language: Language = language
        self._problem = ""
        card = named(QFrame(), "firstRunCard")
        card.setMaximumWidth(720)
        card.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.title = named(QLabel(), "firstRunTitle")
        self.title.setWordWrap(True)
        self.intro = self._paragraph("firstRunIntro")
        self.local_title, self.local_body = self._option("firstRunLocal")
        self.cloud_title, self.cloud_body = self._option("firstRunCloud")
        self.problem = self._paragraph("firstRunProblem")
        self.problem.setProperty("result", "error")
        self.problem.hide()
        self.open_button = named(QPushButton(), "openSettingsButton")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.open_settings_requested)
        self.retry_button = named(QPushButton(), "retryButton")
        self.retry_button.clicked.connect(self.retry_requested)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.open_button)
        column = QVBoxLayout(card)
        column.setContentsMargins(28, 24, 28, 24)
        column.setSpacing(10)
        for widget in (self.title, self.intro, self.local_title, self.local_body, self.cloud_title, self.cloud_body,
                       self.problem):
            column.addWidget(widget)
        column.addSpacing(6)
        column.addLayout(buttons)
        # Wrapped labels only get their right height when the card's width comes from a layout (not from an
        # alignment flag, which sizes it by its hint): stretches either side, the card growing up to its maximum.
        card.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 100)
        row.addStretch(1)
        inner = QWidget()
        centre = QVBoxLayout(inner)
        centre.setContentsMargins(16, 16, 16, 16)
        centre.addStretch(1)
        centre.addLayout(row)
        centre.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(inner)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.set_language(language)

    @staticmethod
    def _paragraph(name: str) -> QLabel:
        label = named(QLabel(), name)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # commands can be copied
        return label

    def _option(self, name: str) -> tuple[QLabel, QLabel]:
        title = named(QLabel(), name + "Title")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        title.setWordWrap(True)
        body = self._paragraph(name + "Body")
        body.setContentsMargins(14, 0, 0, 4)
        return title, body

    def _t(self, key: str) -> str:
        return TEXTS.text(key, self.language)

    def set_language(self, language: Language) -> None:
        self.language = language
        self.title.setText(self._t("title"))
        self.intro.setText(self._t("intro"))
        self.local_title.setText("1. " + self._t("local.title"))
        self.local_body.setText(self._t("local.body"))
        self.cloud_title.setText("2. " + self._t("cloud.title"))
        self.cloud_body.setText(self._t("cloud.body"))
        self.open_button.setText(self._t("open_settings"))
        self.retry_button.setText(self._t("retry"))
        self.set_problem(self._problem)

    def set_problem(self, problem: str | None) -> None:
        """Shows why the model is not reachable (e.g. a failed connection check); ``None``/``""`` hides it.

        :data:`NOT_FOUND` says, in the panel's language, that the search for a local server found nothing."""
        self._problem = problem or ""
        self.problem.setText(html.escape(self.problem_text()))
        self.problem.setVisible(bool(self._problem))

    def problem_text(self) -> str:
        """The problem as the panel says it (plain text; empty when there is none)."""
        if not self._problem:
            return ""
        if self._problem == NOT_FOUND:
            return self._t("not_found")
        return self._t("problem").format(problem=self._problem)
