"""What every tab of the settings dialog is made of: a form whose rows show a hint and the field's validation
message under it, result labels styled by state, and the dialog's task owner for the tab's tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from companions.common.languages import Language
from ui.settings.texts import text, voice_problem_text
from ui.window.i18n import window_language
from ui.window.naming import named

Spawn = Callable[[Coroutine[Any, Any, None]], None]
"""Runs a coroutine as a task the dialog owns (cancelled when it closes)."""


def show_result(label: QLabel, state: str, message: str) -> None:
    """``label`` says ``message``, styled as ``state`` ("ok", "error", "busy")."""
    label.setProperty("result", state)
    label.setText(message)
    label.style().unpolish(label)
    label.style().polish(label)


async def voice_test(speech: Awaitable[None], button: QPushButton | None, result: QLabel,
                     language: Language, *, voice: str | None = None) -> tuple[bool, str]:
    """Runs a voice test (``speech``: a sentence said by the app's speaker) with ``button`` disabled meanwhile, and
    says in ``result`` whether it was heard (by the ``voice`` named), or why not (the speaker's own words in its
    tooltip)."""
    if button is not None:
        button.setEnabled(False)
    show_result(result, "busy", text("testing", language))
    reason = ""
    try:
        await speech
        ok, message = True, text("voice.ok", language) if voice is None else text("voice.ok_by", language,
                                                                                   voice=voice)
    except Exception as err:  # no audio device is a message, not a crash
        reason = str(err) or type(err).__name__
        ok, message = False, voice_problem_text(reason, language)
    finally:
        if button is not None:
            button.setEnabled(True)
    result.setToolTip(reason)
    show_result(result, "ok" if ok else "error", message)
    return ok, message


def labelled_row(form: QFormLayout, label: str, widget: QWidget, *, hint: str | None = None,
                 under: Sequence[QWidget] = ()) -> None:
    """Adds ``widget`` to ``form`` after ``label`` (its buddy), with a one-line ``hint`` and the widgets ``under``
    below it."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(2)
    column.addWidget(widget)
    if hint is not None:
        column.addWidget(named(QLabel(hint), "fieldHint"))  # one line: wrapping breaks form heights
    for below in under:
        column.addWidget(below)
    shown = QLabel(label)
    shown.setBuddy(widget)
    form.addRow(shown, box)


def button_row(*widgets: QWidget, stretch_last: bool = True) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for index, widget in enumerate(widgets):
        layout.addWidget(widget, 1 if stretch_last and index == len(widgets) - 1 else 0)
    return row


class SettingsPage(QWidget):
    """One tab. ``errors`` is the dialog's map from a field ("llm.base_url") to the label under it; ``changed``
    fires on every edit (the dialog validates again)."""

    changed = Signal()

    def __init__(self, errors: dict[str, QLabel], spawn: Spawn) -> None:
        super().__init__()
        # The window's language when the dialog opened: the page's words, and the language whose voices the
        # Companions tab lists and saves (data: a voice is chosen per language).
        self.language: Language = "ja" if window_language() == "ja" else "en"
        self._errors = errors
        self._spawn = spawn

    def t(self, key: str, **values: object) -> str:
        return text(key, self.language, **values)

    def values(self) -> dict[str, dict[str, Any]]:
        """What this tab says, section by section, as raw values for the settings' pydantic models."""
        return {}

    def changed_signal(self, *signals: Any) -> None:
        for signal in signals:
            signal.connect(self._changed)

    def _changed(self, *_: object) -> None:
        self.changed.emit()

    def error_label(self, key: str) -> QLabel:
        label = named(QLabel(), "fieldError")
        label.setProperty("field", key)
        label.setWordWrap(True)
        label.hide()
        self._errors[key] = label
        return label

    def form(self) -> QFormLayout:
        form = QFormLayout(self)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        return form

    def row(self, form: QFormLayout, label_key: str, widget: QWidget, field: str | None = None, *,
            hint: str | None = None, note: QLabel | None = None) -> None:
        """A row labelled with the text ``label_key``, the text ``hint`` under the widget, then ``note``, then the
        label that says what is wrong with ``field``."""
        under = [w for w in (note, self.error_label(field) if field is not None else None) if w is not None]
        labelled_row(form, self.t(label_key), widget, hint=self.t(hint) if hint is not None else None, under=under)
