"""In-process query responders: ``vision`` (the camera) and ``speak`` (the speaker), built on the device ports.

Both follow the QueryResponder contract: every failure is an error :class:`QueryResult`, never an exception, so
a companion's tool always gets something it can read.

Result bodies:
- ``vision``: ``{"image": <base64 JPEG>, "mime": "image/jpeg", "width", "height", "timestamp", "description"?,
  "description_details"?}``. ``description`` (on by default; ``{"describe": false}`` in the query body turns it
  off) is one sentence computed on the device, not by a model, and says so; ``description_details`` holds its
  measurements (faces, brightness, motion, colours).
- ``speak`` (query body ``{"message", "emotion"?}`` as in the reference, plus Madoi's ``"voice"?, "rate"?``):
  success with ``{"duration", "interrupted", "skipped", "voice", "reason"?}``. No audio device is *success* with
  ``skipped: true`` (the conversation goes on); an interruption or a synthesis failure is ``success: false``.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import Any, Final

from companions.devices import EMOTIONS, Camera, DeviceUnavailable, Emotion, Speaker, Utterance, VoiceMap
from companions.protocol import Query, QueryResult, QueryResultBody

log = logging.getLogger(__name__)

MAX_SPEAK_CHARS: Final = 5000


class VisionResponder:
    """Answers ``vision`` queries with the camera's latest frame."""

    query_type: str = "vision"

    def __init__(self, camera: Camera) -> None:
        self._camera = camera

    async def respond(self, query: Query) -> QueryResult:
        body = query.params.body or {}
        describe = body.get("describe", True)
        if not isinstance(describe, bool):
            return QueryResult.fail(query.id, "vision: 'describe' must be true or false")
        try:
            frame = await self._camera.capture(describe=describe)
        except DeviceUnavailable as err:
            return QueryResult.fail(query.id, str(err))
        except asyncio.CancelledError:
            raise
        except Exception as err:  # an adapter bug must not take the companion's turn down
            log.exception("vision query %s failed", query.id)
            return QueryResult.fail(query.id, f"vision failed: {err}")
        out: dict[str, Any] = {
            "image": base64.b64encode(frame.jpeg).decode("ascii"),
            "mime": "image/jpeg",
            "width": frame.width,
            "height": frame.height,
            "timestamp": frame.timestamp,
        }
        if frame.description is not None:
            # A sentence a model can read as is, and the measurements for clients that want the numbers.
            out["description"] = str(frame.description.get("summary", ""))
            out["description_details"] = frame.description
        return QueryResult.ok(query.id, out)


class SpeakResponder:
    """Answers ``speak`` queries when the utterance has finished (or was skipped, interrupted, failed)."""

    query_type: str = "speak"

    def __init__(self, speaker: Speaker, voices: VoiceMap | None = None) -> None:
        self._speaker = speaker
        self.voices = voices or VoiceMap()

    async def respond(self, query: Query) -> QueryResult:
        body = query.params.body or {}
        text = body.get("message", body.get("text"))
        if not isinstance(text, str) or not text.strip():
            return QueryResult.fail(query.id, "speak: 'message' must be a non-empty string")
        if len(text) > MAX_SPEAK_CHARS:
            return QueryResult.fail(query.id, f"speak: message longer than {MAX_SPEAK_CHARS} characters")
        emotion = body.get("emotion", "neutral")
        if emotion not in EMOTIONS:
            return QueryResult.fail(query.id, f"speak: unknown emotion {emotion!r} (one of {', '.join(EMOTIONS)})")
        voice = body.get("voice")
        if voice is not None and not isinstance(voice, str):
            return QueryResult.fail(query.id, "speak: 'voice' must be a string")
        rate = body.get("rate")
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int) or not 50 <= rate <= 400):
            return QueryResult.fail(query.id, "speak: 'rate' must be words per minute, 50 to 400")
        utterance = Utterance(text=text, emotion=_emotion(emotion), speaker_id=query.params.from_,
                              voice=voice or self.voices.voice_for(query.params.from_), rate=rate)
        try:
            result = await self._speaker.speak(utterance)
        except asyncio.CancelledError:
            raise
        except DeviceUnavailable as err:
            return QueryResult.fail(query.id, str(err))
        except Exception as err:
            log.exception("speak query %s failed", query.id)
            return QueryResult.fail(query.id, f"speak failed: {err}")
        return QueryResult(id=query.id, result=QueryResultBody(success=result.success, body=result.to_body()))


def _emotion(value: str) -> Emotion:
    for emotion in EMOTIONS:
        if emotion == value:
            return emotion
    return "neutral"
