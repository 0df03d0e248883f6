"""Wiring: the camera (and noticing through it), the speaker and their query responders for a runtime's settings.

``app/runtime/assembly.py`` calls :func:`build_devices`, adds :attr:`Devices.components` to the runtime's components and
registers :attr:`Devices.responders` with the query broker; the settings dialog calls
:meth:`Devices.apply_settings` after the user changes them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from app.devices.camera import OpenCVCamera, build_camera
from app.devices.presence import PresenceWatcher
from app.devices.speaker import Pyttsx3Speaker, build_speaker
from app.devices.voice_spec import DEFAULT_RATE, parse_voice_spec
from app.devices.voicevox_discovery import EngineSearch
from app.settings.model import Settings, VoiceSettings
from companions.devices.ports import Utterance, VoiceMap
from companions.devices.responders import SpeakResponder, VisionResponder
from companions.voice_input.listening import VoiceInput
from companions.wire.bus import Bus


@dataclass
class Devices:
    camera: OpenCVCamera
    speaker: Pyttsx3Speaker
    vision: VisionResponder
    speak: SpeakResponder
    voice_input: VoiceInput | None = None  # the microphone: app/voice_input/wiring.py
    presence: PresenceWatcher | None = None  # noticing who is there, through the camera
    _search: asyncio.Task[EngineSearch] | None = field(default=None, repr=False)  # the voice engines' search

    @property
    def components(self) -> list[OpenCVCamera | PresenceWatcher | Pyttsx3Speaker | VoiceInput]:
        """Runtime components, in start order (noticing after the camera it watches through, voice input after the
        speaker it listens to)."""
        return [self.camera, *([self.presence] if self.presence is not None else []), self.speaker,
                *([self.voice_input] if self.voice_input is not None else [])]

    @property
    def responders(self) -> list[VisionResponder | SpeakResponder]:
        return [self.vision, self.speak]

    async def test_voice(self, voice: VoiceSettings, sentence: str, voice_id: str | None = None) -> None:
        """The settings dialog's "test voice": says ``sentence`` at ``voice``'s rate (in the engine voice
        ``voice_id``: a companion's, with its card's tuning); raises with the reason when nothing could be heard
        (speech off, no audio device, synthesis failed)."""
        if not voice.enabled:
            raise RuntimeError("speech is turned off")
        card_rate = parse_voice_spec(voice_id).rate  # a companion's voice carries its card's rate: heard as it
        rate = round(voice.rate * card_rate / DEFAULT_RATE) if card_rate else voice.rate  # will be, at this rate
        result = await self.speaker.speak(Utterance(sentence, rate=max(50, min(400, rate)), speaker_id="settings",
                                                    voice=voice_id))
        if not result.success or result.skipped:
            raise RuntimeError(result.reason or "the speech was interrupted")

    async def apply_settings(self, settings: Settings) -> None:
        """Re-checks the camera when its source changed and follows the camera switch and noticing; the speaker's rate
        and volume apply from the next utterance (turning speech on or off applies from the next start), and the
        voice engines are looked for again when their URLs changed, and Kokoro loads when a companion was just given
        one of its voices."""
        self.speaker.rate, self.speaker.volume = settings.voice.rate, settings.voice.volume
        if _kokoro_chosen(settings) and not self.speaker.kokoro_at_start:
            self.speaker.preload_kokoro()  # a companion was just given a Kokoro voice: its first line need not wait
        engines = (tuple(settings.voice.engines), settings.voice.find_engines)
        if engines != (self.speaker.engine_urls, self.speaker.find_local_engines):
            self.speaker.engine_urls, self.speaker.find_local_engines = engines
            self._search = asyncio.get_running_loop().create_task(self.speaker.find_engines())  # in the background
        await self.camera.switch(settings.camera.on)
        if settings.camera.source != self.camera.source:
            await self.camera.reconfigure(settings.camera.source)
        if self.presence is not None:
            await self.presence.set_on(settings.camera.notice)


def build_devices(settings: Settings, bus: Bus, *, voices: VoiceMap | None = None,
                  speech_dir: Path | None = None, data_dir: Path | None = None) -> Devices:
    """The devices for ``settings``. ``speech_dir`` renders speech to WAV files there instead of playing it;
    ``data_dir`` is where downloaded voices are (Kokoro's)."""
    camera = build_camera(settings.camera.source, bus, switched_on=settings.camera.on)
    speaker = build_speaker(bus, rate=settings.voice.rate, volume=settings.voice.volume,
                            enabled=settings.voice.enabled, output_dir=speech_dir,
                            engine_urls=settings.voice.engines, find_local_engines=settings.voice.find_engines,
                            data_dir=data_dir)
    speaker.kokoro_at_start = _kokoro_chosen(settings)
    return Devices(camera, speaker, VisionResponder(camera), SpeakResponder(speaker, voices),
                   presence=PresenceWatcher(camera, bus, on=settings.camera.notice))


def _kokoro_chosen(settings: Settings) -> bool:
    """A companion's voice in the settings is one of Kokoro's."""
    return any(voice.lower().startswith("kokoro") for chosen in settings.companions.values()
               for voice in chosen.voice.values())
