"""The recognizer port: speech to words, with partial results while the user is still speaking.

Adapters (``app/voice_input/recognizers.py``): CMU PocketSphinx with its US English model (inside its wheel: no
network, no download) and whisper.cpp for Japanese and English (a model the user downloads once, from the
settings). Every call may take long (a model loads, a buffer is decoded): the controller makes them all on one
thread of its own, in order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

# How far the recognizer trusts its words: "sure" (they may go out at once), "unsure" (they wait in the message box
# for the user's Enter) or "foreign" (the sound did not fit its language at all: most likely a language it does
# not speak, so its words are nonsense and are not shown).
Certainty: TypeAlias = Literal["sure", "unsure", "foreign"]


@dataclass(frozen=True)
class Recognized:
    """An utterance's final words, how sure the recognizer is of them, and its own measure of that (``confidence``,
    on the recognizer's scale; None when it has none)."""

    text: str
    certainty: Certainty = "sure"
    confidence: float | None = None


class RecognizerUnavailable(Exception):
    """The recognizer cannot run (its model is missing or broken); ``str(err)`` says why, in words."""


class RecognitionSession(Protocol):
    """One utterance being recognized."""

    def accept(self, pcm: bytes) -> None:
        """More audio (16 kHz mono int16), in order."""
        ...

    def partial(self) -> str:
        """The words so far (may be revised by later audio); "" when nothing yet."""
        ...

    def pause(self) -> None:
        """The user paused: what was accepted so far may be the whole utterance. A recognizer that decodes whole
        utterances decodes it now, during the end-of-speech silence, and :meth:`finish` with no audio accepted in
        between returns that decoding; a streaming one has nothing to do."""
        ...

    def finish(self) -> Recognized:
        """The final words of the utterance and how sure they are (no audio may follow)."""
        ...


class Recognizer(Protocol):
    """Makes sessions; :meth:`prepare` loads what it needs (once, before the first utterance)."""

    @property
    def name(self) -> str: ...

    @property
    def streaming(self) -> bool:
        """True when it decodes the audio as it comes (a pause leaves it nothing to decode ahead, and it hears the
        whole silence that ends an utterance); False when it decodes whole utterances (it is told of pauses)."""
        ...

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages it understands (ISO 639-1 codes: ("en",)); empty: any it may be asked for."""
        ...

    def prepare(self) -> None:
        """Loads the model; raises :class:`RecognizerUnavailable` with the reason."""
        ...

    def use_words(self, words: Iterable[str]) -> None:
        """Words the user is likely to say that a general vocabulary may lack (the companions' names)."""
        ...

    def begin(self) -> RecognitionSession: ...

    def close(self) -> None: ...
