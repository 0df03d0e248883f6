"""The settings dialog's Privacy tab: what the user allowed or refused to companions and people outside this window
(the consent prompt's *Always* and *Never*, kept in ``[trust]``), each with a way to forget it: the source is then
asked again the next time (companions/trust/policy.py).

The tab reads the decisions from the settings object it was given each time it is shown and when the dialog saves,
so an answer given in the window while the dialog is open is neither missed nor lost; what it forgets is left out
on Save (the runtime then stops using it at once).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QPushButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from app.settings.model import TrustSettings
from companions.common.languages import Language
from companions.trust.policy import TrustDecision
from ui.settings.form import SettingsPage, Spawn, button_row
from ui.trust.consent_prompt import capability_text
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

TEXTS: Final = Texts("settings_privacy", {
    "tab": QT_TRANSLATE_NOOP("settings_privacy", "Privacy"),
    "intro": QT_TRANSLATE_NOOP("settings_privacy",
                               "Companions and people outside this window (on the network or through the bridge) "
                               "are asked before they use your camera, your voice, your files, your past "
                               "conversations or tools from elsewhere. What you answered with Always or Never is "
                               "listed here: forget an answer to be asked again."),
    "decisions": QT_TRANSLATE_NOOP("settings_privacy", "Remembered answers"),
    "none": QT_TRANSLATE_NOOP("settings_privacy", "Nothing remembered yet."),
    "who": QT_TRANSLATE_NOOP("settings_privacy", "Who"),
    "what": QT_TRANSLATE_NOOP("settings_privacy", "What"),
    "answer": QT_TRANSLATE_NOOP("settings_privacy", "Answer"),
    "when": QT_TRANSLATE_NOOP("settings_privacy", "When"),
    "always": QT_TRANSLATE_NOOP("settings_privacy", "Allowed"),
    "never": QT_TRANSLATE_NOOP("settings_privacy", "Refused"),
    "forget": QT_TRANSLATE_NOOP("settings_privacy", "Forget"),
    "forget.tip": QT_TRANSLATE_NOOP("settings_privacy", "Ask again next time (applies when you save)"),
})
KEY_ROLE: Final = Qt.ItemDataRole.UserRole


def _key(decision: TrustDecision) -> str:
    return f"{decision.capability}\n{decision.source}"


def _local_time(stamp: str) -> str:
    """``2026-11-26 11:40``: when it was decided, in this computer's time zone (kept in UTC)."""
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:  # a hand-edited file: shown as it is
        return stamp


class PrivacyPage(SettingsPage):
    """The remembered answers of ``trust`` (read live: see the module's docstring) with Forget."""

    def __init__(self, trust: TrustSettings, errors: dict[str, Any], spawn: Spawn) -> None:
        super().__init__(errors, spawn)
        self.trust = trust
        self.forgotten: set[str] = set()  # keys of the answers forgotten here (capability, source)
        column = QVBoxLayout(self)
        intro = named(QLabel(self.tt("intro")), "fieldHint")
        intro.setWordWrap(True)
        title = QLabel(self.tt("decisions"))
        self.decisions = named(QTreeWidget(), "trustDecisions")
        self.decisions.setRootIsDecorated(False)
        self.decisions.setHeaderLabels([self.tt(k) for k in ("who", "what", "answer", "when")])
        self.decisions.setAccessibleName(self.tt("decisions"))
        title.setBuddy(self.decisions)
        self.empty = named(QLabel(self.tt("none")), "fieldHint")
        self.forget_button = named(QPushButton(self.tt("forget")), "forgetDecisionButton")
        self.forget_button.setToolTip(self.tt("forget.tip"))
        self.forget_button.clicked.connect(self.forget_selected)
        self.decisions.currentItemChanged.connect(self._selection_changed)
        column.addWidget(intro)
        column.addWidget(title)
        column.addWidget(self.decisions, 1)
        column.addWidget(self.empty)
        column.addWidget(button_row(self.forget_button, QLabel()))
        self.refresh()

    @staticmethod
    def title(language: Language | None = None) -> str:
        return TEXTS.text("tab", language)

    def tt(self, key: str) -> str:
        return TEXTS.text(key, self.language)

    def kept(self) -> list[TrustDecision]:
        """The remembered answers now, without those forgotten here."""
        return [d for d in self.trust.decisions if _key(d) not in self.forgotten]

    def refresh(self) -> None:
        current = self.decisions.currentItem()
        selected = current.data(0, KEY_ROLE) if current is not None else None
        self.decisions.clear()
        for decision in self.kept():
            who = f"{decision.name} ({decision.source})" if decision.name else decision.source
            when = _local_time(decision.decided_at)
            row = QTreeWidgetItem([who, capability_text(decision.capability, self.language),
                                   self.tt(decision.decision), when])
            row.setData(0, KEY_ROLE, _key(decision))
            row.setToolTip(0, decision.source)
            self.decisions.addTopLevelItem(row)
            if _key(decision) == selected:
                self.decisions.setCurrentItem(row)
        for column in range(self.decisions.columnCount()):
            self.decisions.resizeColumnToContents(column)
        self.empty.setVisible(self.decisions.topLevelItemCount() == 0)
        self._selection_changed()

    def forget_selected(self) -> None:
        current = self.decisions.currentItem()
        if current is None:
            return
        self.forgotten.add(str(current.data(0, KEY_ROLE)))
        self.refresh()
        self.changed.emit()

    def _selection_changed(self, *_: object) -> None:
        self.forget_button.setEnabled(self.decisions.currentItem() is not None)

    def showEvent(self, event: QShowEvent) -> None:
        self.refresh()  # answers given in the window meanwhile
        super().showEvent(event)

    def values(self) -> dict[str, dict[str, Any]]:
        return {"trust": {"decisions": self.kept()}}
