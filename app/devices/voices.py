"""Which engine voice says an utterance: the card's voice where it can read the text, else one of its language;
the voices a companion may be given (Open JTalk's Mei and the system's); and what a reason for not being heard
means, for a person (the settings' voice test words it in their language)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from app.devices.japanese_reading import contains_japanese
from companions.devices.ports import Utterance

log = logging.getLogger(__name__)
_LATIN: Final = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class EngineVoice:
    """A voice that is not pyttsx3's, listed beside the system's (:attr:`Pyttsx3Speaker.voices`): Open JTalk's Mei."""

    id: str
    name: str
    languages: tuple[str, ...]


OPENJTALK_MEI: Final = EngineVoice("openjtalk", "Open JTalk Mei", ("ja",))


def engine_voices(engines: Sequence[Any]) -> list[EngineVoice]:
    """The styles of VOICEVOX-compatible ``engines`` (app/devices/voicevox_discovery.py's FoundEngine) as voices a
    companion may be given: ``voicevox:3@127.0.0.1:50021`` named "VOICEVOX ずんだもん (ノーマル)"."""
    voices = []
    for engine in engines:
        for style in engine.styles:
            voices.append(EngineVoice(f"voicevox:{style.id}@{engine.address}",
                                      f"{engine.name} {style.speaker} ({style.name})", ("ja",)))
    return voices


def choose_voice(voices: Sequence[Any], utterance: Utterance, *, espeak: bool) -> tuple[str, bool]:
    """The engine voice id for ``utterance`` among the engine's ``voices``, and whether the text is read as
    Japanese (then converted to kana).

    ``utterance.voice`` is a voice id, a language ("ja", "en-us"), or either with an espeak variant ("en-us+f3",
    as companion cards give it; kept only on ``espeak``). The voice follows the line's language: one that cannot
    read Japanese text is swapped for one that can, and a Japanese voice given a line in Latin letters for an
    English one (the variant stays).
    """
    japanese_text = contains_japanese(utterance.text)
    latin_text = not japanese_text and len(_LATIN.findall(utterance.text)) >= 2
    wanted, _, variant = (utterance.voice or "").strip().lower().partition("+")
    chosen = find_voice(voices, wanted) if wanted else None
    if chosen is not None and japanese_text and not is_language(chosen, "ja"):
        log.info("voice %s cannot read Japanese: using a Japanese voice", chosen.id)
        chosen = None
    elif chosen is not None and latin_text and is_language(chosen, "ja"):
        # The Japanese voice spells English out letter by letter ("ハロー" at best): the line's language decides.
        log.info("voice %s is Japanese and the line is not: using an English voice", chosen.id)
        chosen = None
    if chosen is None:
        chosen = find_voice(voices, "ja" if japanese_text else "en")
    if chosen is None:
        return (utterance.voice or ""), japanese_text
    voice_id = str(chosen.id)
    if variant and espeak:
        voice_id += "+" + variant
    return voice_id, is_language(chosen, "ja")


def find_voice(voices: Sequence[Any], wanted: str) -> Any:
    """The voice whose id is ``wanted``, else the first of that language; ``None`` if none."""
    for voice in voices:
        if str(voice.id).lower() == wanted or str(voice.id).lower().endswith("/" + wanted):
            return voice
    for voice in voices:
        if is_language(voice, wanted) or str(voice.id).lower().endswith("/" + wanted):
            return voice
    return None


def is_language(voice: Any, language: str) -> bool:
    languages = [str(lang).lower() for lang in (getattr(voice, "languages", None) or [])]
    return any(lang == language or lang.startswith(language + "-") or lang.startswith(language + "_")
               for lang in languages)


SpeechProblemKind = Literal["off", "no_device", "no_engine", "not_started", "interrupted", "failed", "other"]
# How the speaker's reasons begin (app/devices/speaker.py, app/devices/wiring.py, the window's voice test).
_REASON_KINDS: Final[tuple[tuple[str, SpeechProblemKind], ...]] = (
    ("speech is turned off", "off"), ("no audio device", "no_device"), ("no speech engine", "no_engine"),
    ("the speaker is not running", "not_started"), ("the speaker has not started", "not_started"),
    ("interrupted", "interrupted"), ("the speech was interrupted", "interrupted"),
    ("speech failed", "failed"), ("the speech engine did not finish", "failed"),
    ("open jtalk is not available", "no_engine"),
)


@dataclass(frozen=True)
class SpeechProblem:
    """Why nothing was heard: a ``kind`` an interface words in its own language, and the speaker's ``reason``
    (with what the system said: the player's error, the engine's exception)."""

    kind: SpeechProblemKind
    reason: str


def speech_problem(reason: str) -> SpeechProblem:
    """The kind of the speaker's ``reason`` ("other" for one it does not know)."""
    said = reason.strip()
    return SpeechProblem(next((kind for start, kind in _REASON_KINDS if said.lower().startswith(start)), "other"),
                         said)


# espeak-ng's voice variants (espeak-ng-data/voices/!v) offered beside each voice: a few women's and men's voices.
ESPEAK_VARIANTS: Final = ("f1", "f2", "f3", "f4", "m1", "m3", "m7")


@dataclass(frozen=True)
class VoiceChoice:
    """A voice the settings may name for a companion: ``id`` is what is kept (``jpx/ja``, ``jpx/ja+f3``), ``name``
    the engine's name for its voice, ``variant`` espeak's variant (``f3``: a woman's voice, ``m7`` a man's)."""

    id: str
    name: str
    variant: str = ""


def voice_choices(voices: Sequence[Any], language: str, *, espeak: bool) -> list[VoiceChoice]:
    """The engine's ``voices`` that speak ``language`` ("ja", "en"), each with espeak's variants on espeak."""
    choices = []
    for voice in voices:
        if not is_language(voice, language):
            continue
        name = str(getattr(voice, "name", "") or voice.id)
        choices.append(VoiceChoice(str(voice.id), name))
        if espeak and not isinstance(voice, EngineVoice):
            choices += [VoiceChoice(f"{voice.id}+{variant}", name, variant) for variant in ESPEAK_VARIANTS]
    return choices
