"""The settings dialog's Companions tab: every companion (its name in the interface language) with its model and its
voice, each with a test.

The model is an editable list: the models the default server lists (asked when the tab is first shown) or any name;
empty means what the companion's card says. "Test" sends one short request to that model the way the companion
would (app/cards/checks.py) and says how it went. The voice lists the speech engine's voices for the interface
language (espeak-ng's variants too); "Test voice" says a sentence in it through the app's one speaker. Saving
applies both at once (``Runtime.apply_settings``). A card the user added that would run a program or send a key
shows exactly what (ui/cards/editor.py ``privilege_lines``) with a box to allow it: ticked, the approval goes to
``[[trust.cards]]`` on Save and the companion runs as its card says at once; unticked, it is held
(companions/cards/approval.py). The whole card is edited in the companion editor (Madoi > Companions…).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.cards.checks import ModelCheck
from app.cards.library import CardEntry, CardLibrary
from app.devices.voices import VoiceChoice
from app.settings.model import CompanionSettings, Paths, Settings, SettingsStore, VoiceSettings
from companions.cards.approval import CardTrust
from companions.cards.card import CompanionCard
from companions.common.languages import Language
from ui.cards.privileges import privilege_lines
from ui.settings.form import SettingsPage, Spawn, button_row, show_result, voice_test
from ui.settings.texts import text
from ui.window.naming import named


def model_check_text(check: ModelCheck, language: Language) -> str:
    """How a companion's model answered its test, in ``language`` (the server's own words stay in a tooltip)."""
    match check.kind:
        case "ok":
            return text("model.ok", language, model=check.model, s=check.seconds)
        case "refused" | "none":
            return text(f"model.{check.kind}", language)
        case "unreachable":
            return text("model.unreachable", language, url=check.url)
        case "unknown" | "timeout":
            return text(f"model.{check.kind}", language, model=check.model)
        case _:
            return text("model.failed", language, model=check.model, error=check.error)


async def model_test(check: Awaitable[ModelCheck], button: QPushButton, result: QLabel,
                     language: Language) -> ModelCheck:
    """Runs a companion's model test (``check``, a coroutine: what it raises is caught) with ``button`` disabled
    meanwhile, and says in ``result`` how the model answered (the server's own words in its tooltip). A tester that
    raises gives a failed check."""
    button.setEnabled(False)
    show_result(result, "busy", text("testing", language))
    try:
        checked = await check
    except Exception as err:  # an injected tester that raises is still a result for the user
        checked = ModelCheck("failed", error=f"{type(err).__name__}: {err}")
    finally:
        button.setEnabled(True)
    result.setToolTip(checked.error)  # the server's own words, for whoever helps
    show_result(result, "ok" if checked.ok else "error", model_check_text(checked, language))
    return checked


class CompanionAccess(Protocol):
    """What the tab asks of the app (:class:`app.cards.checks.CompanionChecks`; a fake in tests)."""

    def cards(self) -> list[CompanionCard]: ...

    async def models(self, settings: Settings) -> list[str]: ...

    async def test_model(self, settings: Settings, card: CompanionCard) -> ModelCheck: ...

    def voices(self, language: str) -> list[VoiceChoice]: ...

    @property
    def can_speak(self) -> bool: ...

    async def say(self, voice: VoiceSettings, sentence: str, voice_id: str | None) -> None: ...


class CompanionRow(QGroupBox):
    """One companion's model and voice, with their tests (and what its card runs and sends, to allow or not)."""

    def __init__(self, card: CompanionCard, chosen: CompanionSettings, page: CompanionsPage,
                 entry: CardEntry | None = None) -> None:
        super().__init__(card.name(page.language))
        named(self, f"companion_{card.id}")
        self.card = card
        t = page.t
        form = QFormLayout(self)
        self.model = named(QComboBox(), "companionModelCombo")
        self.model.setEditable(True)
        self.model.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        line = self.model.lineEdit()
        assert line is not None
        line.setPlaceholderText(t("companion.model.card", model=card.llm.model or t("companion.model.default")))
        self.model.setEditText(chosen.model or "")
        self.test_model_button = named(QPushButton(t("companion.test_model")), "testModelButton")
        self.model_result = named(QLabel(), "modelResult")
        self.model_result.setWordWrap(True)
        self.voice = named(QComboBox(), "companionVoiceCombo")
        self.voice.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        card_voice = card.voice.name_for(page.language)
        self.voice.addItem(t("companion.voice.card", voice=card_voice or t("companion.voice.engine")), "")
        for choice in page.voice_choices:
            self.voice.addItem(page.voice_label(choice), choice.id)
        wanted = chosen.voice.get(page.language, "")
        if wanted and self.voice.findData(wanted) < 0:
            self.voice.addItem(wanted, wanted)  # kept although the engine does not offer it now
        self.voice.setCurrentIndex(max(0, self.voice.findData(wanted)))
        self.test_voice_button = named(QPushButton(t("companion.test_voice")), "testCompanionVoiceButton")
        self.test_voice_button.setEnabled(page.access.can_speak)
        self.voice_result = named(QLabel("" if page.access.can_speak else t("voice.none")), "companionVoiceResult")
        self.voice_result.setWordWrap(True)
        form.addRow(t("companion.model"), self.model)
        form.addRow("", button_row(self.test_model_button, self.model_result))
        form.addRow("", page.error_label(f"companions.{card.id}.model"))
        form.addRow(t("companion.voice"), self.voice)
        form.addRow("", button_row(self.test_voice_button, self.voice_result))
        self.entry = entry if entry is not None and entry.origin == "user" and not entry.privileges.empty else None
        self.allowed: QCheckBox | None = None
        if self.entry is not None:  # what the card runs and sends, exactly, and whether the user allows it
            asks = named(QLabel("\n".join(f"• {line}" for line in privilege_lines(self.entry.privileges,
                                                                                  page.language))), "cardAsks")
            asks.setWordWrap(True)
            asks.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.allowed = named(QCheckBox(t("companion.allow")), "allowCardCheck")
            self.allowed.setChecked(self.entry.trusted)
            form.addRow(t("companion.asks"), asks)
            form.addRow("", self.allowed)

    def chosen_voice(self) -> str:
        return str(self.voice.currentData() or "")


class CompanionsPage(SettingsPage):
    model_tested = Signal(str, object)  # companion id, ModelCheck
    models_offered = Signal(list)  # the default server's models (empty when it did not answer)
    voice_tested = Signal(str, bool, str)  # companion id, ok, message

    def __init__(self, settings: Settings, access: CompanionAccess, *, candidate: Callable[[], Settings],
                 voice: Callable[[], VoiceSettings], errors: dict[str, QLabel], spawn: Spawn,
                 paths: Paths | None = None) -> None:
        super().__init__(errors, spawn)
        self.access = access
        self._settings = settings
        self._candidate = candidate
        self._voice = voice
        self.voice_choices = access.voices(self.language)
        self.offered: list[str] | None = None  # the default server's models, once asked
        self.rows: dict[str, CompanionRow] = {}
        outer = QVBoxLayout(self)
        intro = named(QLabel(self.t("companions.intro")), "fieldHint")
        intro.setWordWrap(True)
        outer.addWidget(intro)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        body = QWidget()
        column = QVBoxLayout(body)
        entries = {e.id: e for e in CardLibrary(SettingsStore(settings, paths)).entries()[0]} if paths else {}
        for card in access.cards():
            row = CompanionRow(card, settings.companion(card.id), self, entries.get(card.id))
            if row.allowed is not None:
                self.changed_signal(row.allowed.toggled)
            row.test_model_button.clicked.connect(self._test_model_clicked)
            row.test_voice_button.clicked.connect(self._test_voice_clicked)
            self.changed_signal(row.model.editTextChanged, row.voice.currentIndexChanged)
            self.rows[card.id] = row
            column.addWidget(row)
        if not self.rows:
            column.addWidget(QLabel(self.t("companions.none")))
        column.addStretch(1)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        self._asked = False

    def showEvent(self, event: QShowEvent) -> None:
        """The default server is asked for its models when the tab is first shown (not for every dialog)."""
        super().showEvent(event)
        if not self._asked:
            self._asked = True
            self._spawn(self._offer_models())

    def voice_label(self, choice: VoiceChoice) -> str:
        if not choice.variant:
            return choice.name
        kind = "companion.voice.female" if choice.variant.startswith("f") else "companion.voice.male"
        return self.t(kind, name=choice.name, n=choice.variant[1:])

    def refresh_voices(self) -> None:
        """Adds the voices the speaker offers now (Kokoro's, once downloaded) to every companion's list."""
        self.voice_choices = self.access.voices(self.language)
        for row in self.rows.values():
            for choice in self.voice_choices:
                if row.voice.findData(choice.id) < 0:
                    row.voice.addItem(self.voice_label(choice), choice.id)

    async def _offer_models(self) -> None:
        """Fills every model list with the default server's models (nothing when it does not answer)."""
        models = await self.access.models(self._settings)
        for row in self.rows.values():
            typed = row.model.currentText()
            row.model.addItems([m for m in models if row.model.findText(m) < 0])
            row.model.setEditText(typed)
        self.offered = models
        self.models_offered.emit(models)

    def values(self) -> dict[str, dict[str, Any]]:
        chosen: dict[str, Any] = {}
        for companion_id, row in self.rows.items():
            before = self._settings.companion(companion_id)
            voices = {k: v for k, v in before.voice.items() if k != self.language}
            if row.chosen_voice():
                voices[self.language] = row.chosen_voice()
            chosen[companion_id] = {"model": row.model.currentText().strip() or None, "base_url": before.base_url,
                                    "voice": voices}
        kept = {i: c.model_dump() for i, c in self._settings.companions.items() if i not in self.rows}
        values: dict[str, dict[str, Any]] = {"companions": kept | chosen}
        asking = [(r.entry, r.allowed) for r in self.rows.values() if r.entry is not None and r.allowed is not None]
        if asking:  # [[trust.cards]]: the cards the user allows, as they are now
            trust = CardTrust.of([], self._settings.trust.cards)
            for entry, allowed in asking:
                if allowed.isChecked() and not entry.trusted:
                    trust.approve(entry.card)
                elif not allowed.isChecked():
                    trust.revoke(entry.id)
            values["trust"] = {"cards": [a.model_dump() for a in trust.approvals]}
        return values

    def _row_of(self, button: object) -> CompanionRow | None:
        return next((r for r in self.rows.values() if button in (r.test_model_button, r.test_voice_button)), None)

    def _test_model_clicked(self) -> None:
        row = self._row_of(self.sender())
        if row is not None:
            self.test_model(row.card.id)

    def _test_voice_clicked(self) -> None:
        row = self._row_of(self.sender())
        if row is not None:
            self.test_voice(row.card.id)

    def test_model(self, companion_id: str) -> None:
        self._spawn(self._run_model_test(self.rows[companion_id]))

    def test_voice(self, companion_id: str) -> None:
        self._spawn(self._run_voice_test(self.rows[companion_id]))

    def model_check_text(self, check: ModelCheck) -> str:
        return model_check_text(check, self.language)

    async def _run_model_test(self, row: CompanionRow) -> None:
        check = await model_test(self._check_model(row.card), row.test_model_button, row.model_result,
                                 self.language)
        self.model_tested.emit(row.card.id, check)

    async def _check_model(self, card: CompanionCard) -> ModelCheck:
        return await self.access.test_model(self._candidate(), card)  # the settings as the dialog has them now

    async def _run_voice_test(self, row: CompanionRow) -> None:
        voice_id = row.chosen_voice() or row.card.voice.for_language(self.language)
        sentence = self.t("companion.voice.sample", name=row.card.name(self.language))
        ok, message = await voice_test(self.access.say(self._voice(), sentence, voice_id), row.test_voice_button,
                                       row.voice_result, self.language)
        self.voice_tested.emit(row.card.id, ok, message)
