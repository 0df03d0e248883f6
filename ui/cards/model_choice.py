"""The companion editor's model row: the model this companion talks with (the settings' ``[companions.<id>]``;
empty: as the card says, else the default model), and a test that sends it one short request as the companion
would."""

from __future__ import annotations

from collections.abc import Awaitable

from PySide6.QtWidgets import QWidget

from app.cards.checks import ModelCheck
from companions.common.languages import Language
from ui.cards.editor_texts import TEXTS
from ui.cards.tested_choice import TestedChoice
from ui.settings.companions_tab import model_test
from ui.settings.texts import text


class ModelChoice(TestedChoice):
    """The model (any name may be typed) and its test; ``language`` is the one the words are in."""

    def __init__(self, language: Language, parent: QWidget | None = None) -> None:
        super().__init__(TEXTS.text("model", language), text("companion.test_model", language),
                         ("companionModel", "testModelButton", "modelResult"), parent)
        self.language = language
        self.combo.setEditable(True)
        line = self.combo.lineEdit()
        if line is not None:
            line.setPlaceholderText(TEXTS.text("model.hint", language))

    def show_model(self, model: str | None) -> None:
        self.combo.setEditText(model or "")

    @property
    def chosen(self) -> str | None:
        """The model named (None: as the card says)."""
        return self.combo.currentText().strip() or None

    async def test(self, check: Awaitable[ModelCheck]) -> ModelCheck:
        """Runs ``check`` and says how the model answered."""
        return await model_test(check, self.test_button, self.result, self.language)
