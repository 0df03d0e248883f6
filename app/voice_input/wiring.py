"""Voice input for a runtime's settings: the microphone, the detector, the recognizer, and what they are told.

``app/runtime/assembly.py`` calls :func:`build_voice_input` (the runtime starts it with the devices; the microphone
opens only if the user chose to keep it on, :func:`starts_on`), the runtime's
``apply_settings`` calls :func:`apply_voice_input_settings`. The speaker tells the voice input what it plays
(:func:`listen_to_speaker`), so the companions' own voice is never taken for the user's (``companions/voice_input/
echo.py``); a file microphone can be made a room that hears that voice too (:func:`make_room`, tests and benchmarks).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from app.devices.speaker import Pyttsx3Speaker
from app.settings.environment import environment_settings
from app.settings.model import Settings, VoiceInputSettings
from app.voice_input.microphone import FileMicrophone, build_microphone, read_pcm16k
from app.voice_input.recognizers import build_recognizer
from app.voice_input.voice_activity import WebRtcVoiceActivity
from companions.conversation.commands import ConversationControl
from companions.voice_input.detection import DetectionSettings
from companions.voice_input.listening import ListeningSettings, Sender, VoiceInput
from companions.wire.bus import Bus

log = logging.getLogger(__name__)


def listening_settings(section: VoiceInputSettings) -> ListeningSettings:
    return ListeningSettings(
        on=section.on, mode=section.mode,
        detection=DetectionSettings(end_silence_s=section.end_silence_s, sensitivity=section.sensitivity),
        send_at_end=section.send_at_end, echo=section.echo)


def starts_on(section: VoiceInputSettings, environ: Mapping[str, str]) -> bool:
    """Whether the microphone opens at this start: only when the user chose to keep it as it was left
    (``keep_on``) and left it on, or when ``MADOI_VOICE_INPUT_ON`` asks for it in this run. A microphone left on
    last time and opening by itself surprises (it heard the room and sent it to everyone)."""
    if "on" in environment_settings(environ).get("voice_input", {}):
        return section.on
    return section.on and section.keep_on


def spoken_names(companion_ids: Iterable[str], user_name: str) -> list[str]:
    """The names the recognizer should spell: the companions' (romanized ids) and the user's, unless it is still the
    default "user" (not a name: "User," in every prompt)."""
    return [*companion_ids, *([user_name] if user_name.strip() and user_name != "user" else [])]


def build_voice_input(settings: Settings, bus: Bus, speaker: Pyttsx3Speaker, data_dir: Path, *,
                      send: Sender | None = None, interrupt: Callable[[], None] = lambda: None,
                      words: Callable[[], Iterable[str]] | None = None,
                      environ: Mapping[str, str] | None = None) -> VoiceInput:
    section = settings.voice_input
    section.on = starts_on(section, os.environ if environ is None else environ)  # the switch shows it too
    voice_input = VoiceInput(bus, build_microphone(section.device), WebRtcVoiceActivity(),
                             build_recognizer(section.recognizer, data_dir, section.language),
                             listening_settings(section), send=send, words=words, interrupt=interrupt)
    listen_to_speaker(speaker, voice_input)
    return voice_input


def barge_in(control: ConversationControl, speaker: Pyttsx3Speaker) -> None:
    """The user speaks over a companion: what Esc does (conversation control cancels the turn in flight and its
    speech), and the speaker stops at once whoever asked it to speak."""
    control.interrupt()
    speaker.interrupt()


async def apply_voice_input_settings(voice_input: VoiceInput, previous: Settings, settings: Settings,
                                     data_dir: Path) -> None:
    """The saved settings, at once: a new device or recognizer is opened in place of the old one."""
    old, new = previous.voice_input, settings.voice_input
    microphone = build_microphone(new.device) if new.device != old.device else None
    recognizer = build_recognizer(new.recognizer, data_dir, new.language) \
        if (new.recognizer, new.language) != (old.recognizer, old.language) else None
    await voice_input.configure(listening_settings(new), microphone, recognizer)


def listen_to_speaker(speaker: Pyttsx3Speaker, voice_input: VoiceInput) -> None:
    """Every WAV the speaker plays goes to the voice input's echo guard (read and converted on the speaker's
    thread, handed over on the loop)."""
    loop = asyncio.get_running_loop()

    def played(path: Path | None) -> None:
        at = time.monotonic()
        try:
            if path is None:
                loop.call_soon_threadsafe(voice_input.playback_stopped, at)
            else:
                loop.call_soon_threadsafe(voice_input.hear_playback, read_pcm16k(path), at)
        except Exception:  # a closed loop, an unreadable file: speech goes on regardless
            log.debug("voice input: playback not followed", exc_info=True)

    speaker.playback_listeners.append(played)


def make_room(speaker: Pyttsx3Speaker, microphone: FileMicrophone, echo_gain: float = 0.5,
              echo_delay_s: float = 0.04) -> None:
    """What ``speaker`` plays comes back into ``microphone``, ``echo_gain`` as loud and ``echo_delay_s`` late:
    laptop speakers beside their microphone (a test's or a benchmark's room)."""
    microphone.echo_gain, microphone.echo_delay_s = echo_gain, echo_delay_s

    def played(path: Path | None) -> None:
        at = time.monotonic()
        with contextlib.suppress(Exception):
            if path is None:
                microphone.silence(at)
            else:
                microphone.hear(read_pcm16k(path), at)

    speaker.playback_listeners.append(played)
