"""The companion editor's voice row: the voice this companion speaks with in the editor's language (the settings'
``[companions.<id>]``; the first entry: as the card says), and a test that says a sentence in it through the app's
speaker."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable

from PySide6.QtWidgets import QWidget

from app.devices.voices import VoiceChoice
from companions.common.languages import Language
from ui.cards.editor_texts import TEXTS
from ui.cards.tested_choice import TestedChoice
from ui.settings.form import voice_test
from ui.settings.texts import text


class CardVoice(TestedChoice):
    """The voice and its test; ``language`` is the one whose voices are offered, and the words'."""

    def __init__(self, language: Language, *, can_speak: bool, parent: QWidget | None = None) -> None:
        super().__init__(TEXTS.text("voice", language), text("companion.test_voice", language),
                         ("companionVoice", "testCompanionVoiceButton", "companionVoiceResult"), parent)
        self.language = language
        self.test_button.setEnabled(can_speak)

    def show_voices(self, card_voice: str | None, voices: Iterable[VoiceChoice], wanted: str) -> None:
        """Offers the card's voice (``card_voice``, if it names one), then ``voices``; ``wanted`` is chosen (a voice
        no longer offered is kept, by its id)."""
        self.combo.clear()
        self.combo.addItem(TEXTS.text("voice.card", self.language) + (f" ({card_voice})" if card_voice else ""), "")
        for choice in voices:
            self.combo.addItem(choice.name + (f" {choice.variant}" if choice.variant else ""), choice.id)
        if wanted and self.combo.findData(wanted) < 0:
            self.combo.addItem(wanted, wanted)
        self.combo.setCurrentIndex(max(0, self.combo.findData(wanted)))

    @property
    def chosen(self) -> str:
        """The voice's id ("": as the card says)."""
        return str(self.combo.currentData() or "")

    async def test(self, speech: Awaitable[None]) -> tuple[bool, str]:
        """Runs ``speech`` (a sentence said in the voice) and says whether it was heard."""
        return await voice_test(speech, self.test_button, self.result, self.language)
