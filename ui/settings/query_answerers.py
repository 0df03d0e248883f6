"""Who answers each query type (vision, speak): the bridge tab's part of the settings dialog.

One row per query type: a check box "ask connected clients first" (``bridge.client_answers``) and a line that says,
in the user's words, who answers: the connected clients first and the app's camera or voice after the clients'
grace, or the app at once (clients that announce the type in their hello, and kyoko's older client for vision, are
asked first whatever this says).
"""

from __future__ import annotations

from typing import Final

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from app.settings.model import BridgeSettings
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

QUERY_TYPES: Final = ("vision", "speak")
_TEXTS: Final = Texts("query_answerers", {
    "ask.vision": QT_TRANSLATE_NOOP("query_answerers", "Ask connected clients for the camera picture first"),
    "ask.speak": QT_TRANSLATE_NOOP("query_answerers", "Let connected clients speak the lines first"),
    "first.vision": QT_TRANSLATE_NOOP(
        "query_answerers", "Camera: connected clients first, the app's camera if none answers within {s:g} s."),
    "first.speak": QT_TRANSLATE_NOOP(
        "query_answerers", "Voice: connected clients first (the app stays silent on lines they say), the app's voice "
                           "if none answers in time."),
    "app.vision": QT_TRANSLATE_NOOP(
        "query_answerers", "Camera: the app's camera; only clients that announce it (hello) or kyoko's older client "
                           "for its companion are asked first."),
    "app.speak": QT_TRANSLATE_NOOP(
        "query_answerers", "Voice: the app's voice; only clients that announce it (hello) are asked first, and "
                           "kyoko's older client says its companion's lines itself."),
})


class QueryAnswerers(QWidget):
    """The check boxes and the "who answers" lines; :meth:`client_answers` is the setting's new value."""

    def __init__(self, bridge: BridgeSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "queryAnswerers")
        self._grace = bridge.client_timeout_s
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.asks: dict[str, QCheckBox] = {}
        self.lines: dict[str, QLabel] = {}
        for query_type in QUERY_TYPES:
            ask = named(QCheckBox(self._t(f"ask.{query_type}")), f"clientAnswers_{query_type}")
            ask.setChecked(query_type in bridge.client_answers)
            line = named(QLabel(), f"answeredBy_{query_type}")
            line.setWordWrap(True)
            ask.toggled.connect(lambda _on, t=query_type: self._describe(t))
            self.asks[query_type], self.lines[query_type] = ask, line
            column.addWidget(ask)
            column.addWidget(line)
            self._describe(query_type)

    def client_answers(self) -> list[str]:
        return [t for t, ask in self.asks.items() if ask.isChecked()]

    def _describe(self, query_type: str) -> None:
        key = f"{'first' if self.asks[query_type].isChecked() else 'app'}.{query_type}"
        self.lines[query_type].setText(self._t(key).format(s=self._grace))

    def _t(self, key: str) -> str:
        return _TEXTS.text(key)
