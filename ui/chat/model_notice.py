"""The notice in the chat that the companions' language model is not answering: why, in plain words, and what to do.

The chat panel shows it above the message box as soon as the model health record says an endpoint is in trouble
(:class:`~companions.llm.health.ModelTrouble` on the bus: the first failed request, not the last retry), and hides
it when every endpoint is back (:class:`~companions.llm.health.ModelBack`). One notice however many companions found
the same trouble. It says what went wrong (the server cannot be reached, went away, is too slow, refuses) and where,
in the window's language, with the backend's own words in its tooltip; its buttons open the Language model settings
and, when Madoi runs the model itself, restart it. While the model is down a message the user sends waits in the box
(:meth:`set_waiting`): the notice says it will go by itself.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from companions.llm.health import ModelBack, ModelTrouble
from ui.chat.texts import chat_text
from ui.window.i18n import is_language_change, window_language
from ui.window.naming import named


def trouble_text(trouble: ModelTrouble, language: str | None = None) -> str:
    """What went wrong with the model, and what may help, in ``language`` (the window's by default)."""
    key = f"model.{trouble.kind}"
    if trouble.kind == "unreachable" and trouble.cause in ("connection-refused", "unknown-host"):
        key = f"model.unreachable.{trouble.cause}"
    language = window_language() if language is None else language
    text = chat_text(key, language, host=trouble.host)
    if trouble.down:
        space = "" if language == "ja" else " "  # Japanese sentences follow one another with no space
        text = f"{text}{space}{chat_text('model.checking', language)}"
    return text


class ModelNotice(QFrame):
    """The notice (hidden while every model answers). ``settings_requested``: the user wants the Language model
    settings; ``restart_requested``: the user wants the model Madoi runs restarted (the button shows only when
    :meth:`set_own_model` says Madoi runs it)."""

    settings_requested = Signal()
    restart_requested = Signal()
    changed = Signal()  # shown, hidden or reworded

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.text = named(QLabel(), "modelNoticeText")
        self.text.setWordWrap(True)
        self.text.setProperty("result", "error")
        self.waiting = named(QLabel(), "modelNoticeWaiting")
        self.waiting.setWordWrap(True)
        self.waiting.hide()
        self.settings_button = named(QPushButton(), "modelSettingsButton")
        self.restart_button = named(QPushButton(), "modelRestartButton")
        self.restart_button.hide()
        self.settings_button.clicked.connect(self._open_settings)
        self.restart_button.clicked.connect(self._restart)
        buttons = QHBoxLayout()
        buttons.addWidget(self.settings_button)
        buttons.addWidget(self.restart_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.text)
        layout.addWidget(self.waiting)
        layout.addLayout(buttons)
        self._troubles: dict[str, ModelTrouble] = {}
        self._own_model: Callable[[], bool] = lambda: False
        self._retranslate()
        self.hide()

    # -- state -----------------------------------------------------------------------------------------------
    @property
    def trouble(self) -> ModelTrouble | None:
        """The trouble shown (the latest of the endpoints in trouble), or None."""
        return next(reversed(self._troubles.values()), None)

    @property
    def down(self) -> bool:
        """Whether a model is known not to answer at all (a message sent now would wait)."""
        return any(t.down for t in self._troubles.values())

    def set_own_model(self, own_model: Callable[[], bool]) -> None:
        """``own_model()`` says whether Madoi runs the model itself (then "Restart the model" is offered)."""
        self._own_model = own_model
        self._show()

    def follow(self, event: ModelTrouble | ModelBack) -> None:
        """A change of a model's health (from the bus)."""
        if isinstance(event, ModelTrouble):
            self._troubles.pop(event.endpoint, None)
            self._troubles[event.endpoint] = event  # the latest last: it is the one shown
        else:
            self._troubles.pop(event.endpoint, None)
        self._show()

    def set_waiting(self, waiting: bool) -> None:
        """A message the user sent waits for the model (or no longer does)."""
        self.waiting.setVisible(waiting)
        self.changed.emit()

    def _open_settings(self) -> None:
        self.settings_requested.emit()

    def _restart(self) -> None:
        self.restart_requested.emit()

    # -- showing ---------------------------------------------------------------------------------------------
    def _show(self) -> None:
        trouble = self.trouble
        if trouble is None:
            self.waiting.hide()
            self.hide()
        else:
            self.text.setText(trouble_text(trouble))
            self.text.setToolTip(trouble.detail)
            self.restart_button.setVisible(trouble.down and self._own_model())
            self.show()
        self.changed.emit()

    def _retranslate(self) -> None:
        self.settings_button.setText(chat_text("model.settings"))
        self.restart_button.setText(chat_text("model.restart"))
        self.waiting.setText(chat_text("model.waiting"))
        if self.trouble is not None:
            self._show()

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self._retranslate()
        super().changeEvent(event)
