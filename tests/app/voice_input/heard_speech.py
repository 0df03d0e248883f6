"""What became of speech said into the file microphone, through the real detector and recognizer to the sender:
sent at once, left in the message box as unsure, or not understood (the tests' and ``bench/hearing.py``'s)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from app.voice_input.microphone import FileMicrophone
from app.voice_input.voice_activity import WebRtcVoiceActivity
from companions.voice_input.detection import DetectionSettings
from companions.voice_input.events import SpeechHeard, SpeechNotUnderstood
from companions.voice_input.listening import ListeningSettings, VoiceInput
from companions.voice_input.recognition import Recognizer
from companions.wire.bus import BusItem, InProcessBus
from tests.app.speech_audio import Clip


@dataclass(frozen=True)
class Heard:
    """What became of one sentence said into the microphone: each utterance's outcome ("sent", "box" for words left
    in the message box as unsure, "not understood") and PocketSphinx's certainty of it."""

    sentence: str
    language: str
    outcomes: tuple[tuple[str, float | None, str], ...]  # (outcome, certainty, words)

    @property
    def sent(self) -> bool:
        return any(outcome == "sent" for outcome, _, _ in self.outcomes)


async def hear(recognizer: Recognizer, spoken: Clip, sentence: str = "", language: str = "",
               end_silence_s: float = 0.5, *, words: tuple[str, ...] = ()) -> Heard:
    """``spoken`` played into the file microphone, through the detector and the recognizer to the sender, with
    "send at once" on (the default): what came of it once the whole clip was heard."""
    bus = InProcessBus()
    outcomes: list[tuple[str, float | None, str]] = []

    def on(item: BusItem) -> None:
        if isinstance(item, SpeechHeard) and item.final and item.text:
            outcomes.append(("sent" if item.sent else "box", item.confidence, item.text))
        elif isinstance(item, SpeechNotUnderstood):
            outcomes.append(("not understood", item.confidence, ""))

    bus.subscribe("events", on, name="bench", direct=True)
    microphone = FileMicrophone(spoken.path)
    voice = VoiceInput(bus, microphone, WebRtcVoiceActivity(), recognizer,
                       ListeningSettings(on=True, detection=DetectionSettings(end_silence_s=end_silence_s)),
                       send=lambda text: "m", words=lambda: words)
    await voice.start()
    try:
        await asyncio.sleep(max(0.0, microphone.started_at + spoken.duration_s - time.monotonic()))
        for _ in range(40):  # the last utterance's words, once recognized
            if voice.state == "listening":
                break
            await asyncio.sleep(0.1)
    finally:
        await voice.stop()
    return Heard(sentence, language, tuple(outcomes))
