"""What voice input tells the window (on the bus's ``events`` topic)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from companions.wire.bus import LocalEvent

MicrophoneState: TypeAlias = Literal["off", "listening", "hearing", "recognising", "unavailable"]
ListeningMode: TypeAlias = Literal["hands-free", "push-to-talk"]


@dataclass(frozen=True)
class MicrophoneChanged(LocalEvent):
    """The microphone's state as the status bar shows it: ``off`` (the user switched it off, or voice input is not
    set up), ``listening`` (open, waiting for the user's voice; in push-to-talk: for the key), ``hearing`` (the
    user is speaking), ``recognising`` (the words are being worked out), ``unavailable`` (no microphone:
    ``reason`` says why, in words)."""

    state: MicrophoneState
    reason: str = ""
    source: str = ""
    mode: ListeningMode = "hands-free"


@dataclass(frozen=True)
class SpeechHeard(LocalEvent):
    """What the recognizer made of the user's words so far (``final=False``, shown in the message box as they
    speak) or in the end (``final=True``). ``sent`` says the final text already went to the companions as the
    message ``message_id``; otherwise it waits in the message box for the user to edit and send. ``unsure``: it
    waits because the recognizer is not sure of the words (the user checks them and presses Enter); ``confidence``
    is the recognizer's own measure (benchmarks, logs)."""

    utterance: int  # counts the user's utterances in this run; partial results of one share it
    text: str
    final: bool
    sent: bool = False
    message_id: str = ""
    unsure: bool = False
    confidence: float | None = None


@dataclass(frozen=True)
class SpeechNotUnderstood(LocalEvent):
    """The user spoke, but not in a language the recognizer understands (``languages``, ISO 639-1 codes, e.g.
    ("en",)): the words it would have made of it are nonsense, so none were shown or sent. The window says so and
    offers a recognizer that understands more."""

    utterance: int
    languages: tuple[str, ...]
    confidence: float | None = None


@dataclass(frozen=True)
class EchoAdvice(LocalEvent):
    """Whether the microphone hears the companions' own voice so loudly that a headset would serve the user better
    (their voice can then cut the companions off reliably). ``coupling_db`` is the echo's level against what is
    played, as measured."""

    headset: bool
    coupling_db: float
