"""The user's choices for each companion over its card (``[companions.<id>]`` in the settings), on the running
companions: its voice here, its model through :meth:`app.llm.connection.ModelConnection.use_choices`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.settings.model import Settings
from companions.companion.companion import Companion
from companions.companion.lines import detect_language


class ChosenVoice:
    """The voice ``companion`` says a line with, in the line's language (the companion's when that cannot be told):
    the settings' choice, else its card's; either with the card's tuning (rate, half-tone, all-pass), so that a
    voice picked in the settings keeps the companion's own pace and pitch."""

    def __init__(self, companion: Companion, chosen: Mapping[Any, str]) -> None:
        self._companion = companion
        self.chosen = dict(chosen)

    def __call__(self, text: str = "") -> str | None:
        language = detect_language(text) or self._companion.language
        voice = self._companion.card.voice
        chosen = self.chosen.get(language)
        return voice.tuned(chosen, engine=False) if chosen else voice.for_language(language)


def use_voices(settings: Settings, companions: Iterable[Companion]) -> None:
    """Each companion speaks with the voice ``settings`` choose for it from its next line on."""
    for companion in companions:
        companion.builtins.voice = ChosenVoice(companion, settings.companion(companion.id).voice)
