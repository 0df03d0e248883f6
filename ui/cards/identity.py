"""The companion editor's first rows: who the companion is (its name, and its id, derived from the name while the
companion is new, and kept once saved) and its words in the language chosen (personality, story, sample lines,
first greeting): a card keeps each text in several languages, the form edits one."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QLineEdit, QPlainTextEdit, QWidget

from companions.cards.card import CardMetadata, CompanionCard, Localized, localized
from companions.cards.character_cards import derive_id
from ui.cards.editor_texts import TEXTS, with_text
from ui.window.naming import named

TEXT_LANGUAGES: Final = ("ja", "en")
ID_LENGTH: Final = 64


def id_problem(card_id: str) -> bool:
    """Whether ``card_id`` cannot be a card's id (letters, digits, '-', '_' or '.', at most 64)."""
    return not card_id or len(card_id) > ID_LENGTH or not all(
        c.isascii() and (c.isalnum() or c in "-_.") for c in card_id)


class CardIdentity(QWidget):
    """The name, the id and the texts; ``language`` is the one the form's words are in (and the texts' first)."""

    changed = Signal()  # the name or the id was changed (the editor checks the form again)

    def __init__(self, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.language = language
        self.name = named(QLineEdit(), "companionName")
        self.card_id = named(QLineEdit(), "companionId")
        self.id_error = named(QLabel(), "fieldError")
        self.text_language = named(QComboBox(), "textLanguage")
        for code in TEXT_LANGUAGES:
            self.text_language.addItem(self._t(f"lang.{code}"), code)
        self.personality = named(QPlainTextEdit(), "companionPersonality")
        self.story = named(QPlainTextEdit(), "companionStory")
        self.samples = named(QPlainTextEdit(), "companionSamples")
        for box in (self.personality, self.story, self.samples):
            box.setTabChangesFocus(True)
            box.setFixedHeight(72)
        self.greeting = named(QLineEdit(), "companionGreeting")
        self.greeting_hint = named(QLabel(self._t("greeting.hint")), "fieldHint")  # what the greeting is for
        self.greeting_hint.setToolTip(self._t("greeting.hint.tip"))
        self.greeting.setToolTip(self._t("greeting.hint.tip"))
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.addRow(self._t("name"), self.name)
        self.form.addRow(self._t("id"), self.card_id)
        self.form.addRow("", self.id_error)
        self.form.addRow(self._t("texts"), self.text_language)
        self.form.addRow(self._t("personality"), self.personality)
        self.form.addRow(self._t("story"), self.story)
        self.form.addRow(self._t("samples"), self.samples)
        self.form.addRow(self._t("greeting"), self.greeting)
        self.form.addRow("", self.greeting_hint)
        self._card: CompanionCard | None = None  # whose texts the form shows (None: a new companion's)
        self._loading = False
        self.name.textChanged.connect(self._name_changed)
        self.card_id.textChanged.connect(self._id_changed)
        self.text_language.currentIndexChanged.connect(self._language_switched)

    def _t(self, key: str) -> str:
        return TEXTS.text(key, self.language)

    @property
    def editing_language(self) -> str:
        """The language of the texts the form edits."""
        return str(self.text_language.currentData())

    def show_card(self, card: CompanionCard | None) -> None:
        """Fills the rows with ``card`` (None: a new companion), its texts in the editor's language, or in the one
        an imported card is written in."""
        self._loading = True
        self._card = card
        language = self.language
        texts = card.metadata.personality if card is not None else None
        if isinstance(texts, dict) and texts and language not in texts:
            language = next(iter(texts))  # an imported card: the language it is written in
        self.text_language.setCurrentIndex(max(0, self.text_language.findData(language)))
        self.name.setText(card.name(self.editing_language) if card is not None else "")
        self.card_id.setText(card.id if card is not None else "")
        self.card_id.setReadOnly(card is not None)
        self._fill_texts()
        self._loading = False

    def show_new(self, name: str) -> None:
        """The form describes a new companion now (a duplicate): its id follows ``name`` until saved."""
        self._card = None
        self.card_id.setReadOnly(False)
        self.name.setText(name)

    def check(self, taken: Collection[str]) -> bool:
        """Says under the id what is wrong with the name or the id (a new companion's may not be one of ``taken``)."""
        problem = ""
        if not self.name.text().strip():
            problem = self._t("err.name")
        elif id_problem(self.card_id.text()):
            problem = self._t("err.id")
        elif self._card is None and self.card_id.text() in taken:
            problem = self._t("err.taken")
        self.id_error.setText(problem)
        self.id_error.setVisible(bool(problem))
        return not problem

    def metadata(self, before: CardMetadata) -> CardMetadata:
        """``before`` with the id, and the name and texts in the language edited, as the form says."""
        language = self.editing_language
        return before.model_copy(update={
            "id": self.card_id.text(),
            "name": with_text(before.name, language, self.name.text().strip()),
            "personality": with_text(before.personality, language, self.personality.toPlainText().strip()),
            "story": with_text(before.story, language, self.story.toPlainText().strip()),
            "sample": with_text(before.sample, language, self.samples.toPlainText().strip()),
        })

    def greeting_text(self, before: Localized) -> Localized:
        """The card's first greeting ``before`` with the language edited as the form says."""
        return with_text(before, self.editing_language, self.greeting.text().strip())

    def _fill_texts(self) -> None:
        card = self._card
        language = self.editing_language
        m = card.metadata if card is not None else None
        self.personality.setPlainText(localized(m.personality, language) if m is not None else "")
        self.story.setPlainText(localized(m.story, language) if m is not None else "")
        self.samples.setPlainText(localized(m.sample, language) if m is not None else "")
        self.greeting.setText(localized(card.greeting, language) if card is not None else "")

    def _name_changed(self, text: str) -> None:
        if not self._loading and self._card is None:  # a new companion: its id follows its name until saved
            self.card_id.setText(derive_id(text) if text.strip() else "")
        self.changed.emit()

    def _id_changed(self, _text: str) -> None:
        self.changed.emit()

    def _language_switched(self) -> None:
        if not self._loading:
            self._fill_texts()
