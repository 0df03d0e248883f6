"""The recognizer port: speech to words, with partial results while the user is still speaking.

Adapters (``app/voice_input/recognizers.py``): CMU PocketSphinx with its US English model (inside its wheel: no
network, no download) and whisper.cpp for Japanese and English (a model the user downloads once, from the
settings). Every call may take long (a model loads, a buffer is decoded): the controller makes them all on one
thread of its own, in order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


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

    def finish(self) -> str:
        """The final words of the utterance (no audio may follow)."""
        ...


class Recognizer(Protocol):
    """Makes sessions; :meth:`prepare` loads what it needs (once, before the first utterance)."""

    @property
    def name(self) -> str: ...

    def prepare(self) -> None:
        """Loads the model; raises :class:`RecognizerUnavailable` with the reason."""
        ...

    def use_words(self, words: Iterable[str]) -> None:
        """Words the user is likely to say that a general vocabulary may lack (the companions' names)."""
        ...

    def begin(self) -> RecognitionSession: ...

    def close(self) -> None: ...
