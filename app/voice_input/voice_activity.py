"""Voice activity: Google's WebRTC detector (``webrtcvad-wheels``), a few microseconds per 20 ms frame.

Its aggressiveness (0-3) follows the sensitivity (``DetectionSettings.vad_mode``); the level floor and the number of
voiced frames that start an utterance are the detector's own (``companions/voice_input/detection.py``).
"""

from __future__ import annotations

import webrtcvad

from companions.voice_input.audio import SAMPLE_RATE


class WebRtcVoiceActivity:
    def __init__(self, mode: int = 2) -> None:
        self._vad = webrtcvad.Vad(mode)

    def set_mode(self, mode: int) -> None:
        self._vad.set_mode(max(0, min(3, mode)))

    def is_speech(self, pcm: bytes) -> bool:
        return bool(self._vad.is_speech(pcm, SAMPLE_RATE))
