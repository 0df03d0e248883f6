"""A voice as a ``speak`` query names it: a voice name and, when a card tunes it, ``;key=value`` pairs.

``ja;rate=185;half_tone=2.5;all_pass=0.52`` (companions/cards/card.py ``Voice.for_language`` writes it; a settings
choice or another client may send a bare name such as ``jpx/ja+f3``). The name is a language (``ja``, ``en-us``),
a system voice id with an optional espeak variant, ``openjtalk`` (Open JTalk's Mei), or a VOICEVOX-compatible
engine's style: ``voicevox:3`` (style id 3 of the first engine found that has it) or ``voicevox:3@127.0.0.1:50021``
(of the engine at that address; used only when that engine was found on this machine or given by the user), or a
voice of the downloaded neural voice Kokoro: ``kokoro:jf_alpha`` (``kokoro`` alone: its first voice). Keys:

- ``engine``: ``openjtalk``, ``system`` (pyttsx3), ``voicevox`` (a VOICEVOX-compatible engine: its first voice
  when the name gives no style) or ``kokoro``;
- ``rate``: words per minute at the settings' 170 (the settings' rate scales it);
- ``half_tone``: pitch shift in semitones;
- ``all_pass``: Open JTalk's all-pass constant (frequency warping: the voice's apparent size).

Values out of range are clamped and unknown keys ignored: a voice from anywhere never fails a line.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Final, Literal

log = logging.getLogger(__name__)

Engine = Literal["openjtalk", "system", "voicevox", "kokoro"]
OPENJTALK: Final = "openjtalk"
VOICEVOX: Final = "voicevox"
KOKORO: Final = "kokoro"
_KOKORO_NAME: Final = re.compile(r"^kokoro(?::([a-z]{1,3}_[a-z0-9]{1,40}))?$", re.IGNORECASE)
_VOICEVOX_NAME: Final = re.compile(r"^voicevox(?::(-?\d{1,10}))?(?:@([A-Za-z0-9.\-\[\]:]{1,300}))?$",
                                   re.IGNORECASE)
DEFAULT_RATE: Final = 170  # words per minute of the settings' default: a card's rate is relative to it
_LANGUAGE: Final = re.compile(r"^[a-z]{2,3}([-_][a-z0-9]{2,8})*$")


@dataclass(frozen=True)
class VoiceSpec:
    """What a ``speak`` query's voice asks for; ``name`` is None when it names no voice."""

    name: str | None = None
    engine: Engine | None = None
    rate: int | None = None
    half_tone: float = 0.0
    all_pass: float | None = None

    @property
    def names_openjtalk(self) -> bool:
        return self.engine == OPENJTALK or (self.name or "").split(":")[0].lower() == OPENJTALK

    @property
    def names_voicevox(self) -> bool:
        """A VOICEVOX-compatible engine says the line (its name, or ``engine=voicevox`` with a language)."""
        if (self.name or "").lower().startswith(VOICEVOX):
            return _VOICEVOX_NAME.match(self.name or "") is not None
        return self.engine == VOICEVOX and not self.names_openjtalk

    @property
    def names_kokoro(self) -> bool:
        """Kokoro says the line (``kokoro:jf_alpha``, or ``engine=kokoro`` with a language: its first voice)."""
        if (self.name or "").lower().startswith(KOKORO):
            return _KOKORO_NAME.match(self.name or "") is not None
        return self.engine == KOKORO and not self.names_openjtalk and not self.names_voicevox

    @property
    def kokoro_voice(self) -> str | None:
        """The Kokoro voice the name gives (``jf_alpha``), None for Kokoro's choice."""
        match = _KOKORO_NAME.match(self.name or "")
        return match[1].lower() if match is not None and match[1] else None

    @property
    def voicevox_style(self) -> tuple[int | None, str | None]:
        """The style id and the engine's ``host:port`` the name gives (either may be None: the engines' choice)."""
        match = _VOICEVOX_NAME.match(self.name or "")
        if match is None:
            return None, None
        return (int(match[1]) if match[1] is not None else None), match[2]

    @property
    def names_system_voice(self) -> bool:
        """A system voice is named: an engine voice id (``jpx/ja``, a SAPI5 token), not just a language."""
        if self.engine == "system":
            return True
        name = (self.name or "").partition("+")[0].lower()
        return bool(name) and not self.names_openjtalk and not name.startswith((VOICEVOX, KOKORO)) \
            and _LANGUAGE.match(name) is None

    @property
    def system_voice(self) -> str | None:
        """The name for pyttsx3's voice choice (``openjtalk`` names none there)."""
        first = (self.name or "").split(":")[0].split("@")[0].lower()
        return None if first in (OPENJTALK, VOICEVOX, KOKORO) else self.name

    def without_engine(self) -> str | None:
        """This voice as its spec would say it without the VOICEVOX engine or Kokoro it names: its tuning kept, the
        default voice (what says the line when the engine is gone or Kokoro is not downloaded)."""
        name = None if (self.name or "").lower().startswith((VOICEVOX, KOKORO)) else self.name
        parts = [name or ""]
        if self.rate is not None:
            parts.append(f"rate={self.rate}")
        if self.half_tone:
            parts.append(f"half_tone={self.half_tone:g}")
        if self.all_pass is not None:
            parts.append(f"all_pass={self.all_pass:g}")
        return ";".join(parts)


def parse_voice_spec(spec: str | None) -> VoiceSpec:
    """The :class:`VoiceSpec` of ``spec`` (None or empty: no wish at all)."""
    if not spec or not spec.strip():
        return VoiceSpec()
    name, *pairs = (part.strip() for part in spec.split(";"))
    fields: dict[str, object] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        key, value = key.strip().lower(), value.strip()
        try:
            if key == "engine" and value.lower() in ("openjtalk", "system", "voicevox", "kokoro"):
                fields["engine"] = value.lower()
            elif key == "rate":
                fields["rate"] = max(50, min(400, round(float(value))))
            elif key == "half_tone":
                fields["half_tone"] = max(-24.0, min(24.0, float(value)))
            elif key == "all_pass":
                fields["all_pass"] = max(0.0, min(0.99, float(value)))
            else:
                log.debug("voice %r: %r ignored", spec, pair)
        except ValueError:
            log.debug("voice %r: %r is not a number", spec, pair)
    return VoiceSpec(name=name or None, **fields)  # type: ignore[arg-type]
