"""In-process query responders: ``vision`` (the camera) and ``speak`` (the speaker), built on the device ports.

Both follow the QueryResponder contract: every failure is an error :class:`QueryResult`, never an exception, so
a companion's tool always gets something it can read.

Result bodies:
The query bodies and their answers are typed in companions/devices/query_bodies.py (``VisionRequest`` answered with
a ``VisionPicture`` and its ``VisionDescription``, ``SpeakRequest`` answered with a ``SpeakResult``).

- ``vision``: ``{"image": <base64 JPEG>, "mime": "image/jpeg", "width", "height", "timestamp", "description"?,
  "description_details"?}``. ``description`` (on by default; ``{"describe": false}`` in the query body turns it
  off) is one sentence computed on the device, not by a model, and says so; ``description_details`` holds its
  measurements (faces, brightness, motion, colours).
- ``speak`` (query body ``{"message", "emotion"?}`` as in the reference, plus Madoi's ``"voice"?, "rate"?`` and,
  for a line voiced sentence by sentence while it is generated, ``"messageId"?, "part"?, "final"?``):
  success with ``{"duration", "interrupted", "skipped", "voice", "reason"?}``. No audio device is *success* with
  ``skipped: true`` (the conversation goes on); an interruption or a synthesis failure is ``success: false``.

Speaking a line in parts: send one ``speak`` query per sentence as soon as it is complete, each with the same
``messageId`` (the line's id), ``part`` 0, 1, 2 ... and ``final: true`` on the last; do not wait for one to
finish before sending the next. The speaker voices one companion's queries in the order they were sent, back to
back, as one speech (one ``SpeakingChanged`` on/off pair while they follow each other). Cancelling a query
(``send_query``'s caller cancelled, e.g. the user cut in) stops its sentence at once; once one part of a line was
cut off or interrupted, the parts of that line still queued or sent later are answered ``interrupted`` without
being spoken.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import logging
from collections.abc import Coroutine
from typing import Any, Final

from companions.devices.ports import Camera, DeviceUnavailable, Speaker, Utterance, VoiceMap
from companions.devices.query_bodies import (
    QueryBodyInvalid,
    SpeakRequest,
    SpeakResult,
    VisionPicture,
    VisionRequest,
)
from companions.wire.protocol import Query, QueryResult

log = logging.getLogger(__name__)

_LINES_KEPT: Final = 256  # (speaker, messageId) of lines spoken in parts, newest last


class VisionResponder:
    """Answers ``vision`` queries with the camera's latest frame."""

    query_type: str = "vision"

    def __init__(self, camera: Camera) -> None:
        self._camera = camera

    async def respond(self, query: Query) -> QueryResult:
        try:
            request = VisionRequest.of(query)
        except QueryBodyInvalid as err:
            return QueryResult.fail(query.id, str(err))
        try:
            frame = await self._camera.capture(describe=request.describe, looker=query.params.from_)
        except DeviceUnavailable as err:
            return QueryResult.fail(query.id, str(err))
        except asyncio.CancelledError:
            raise
        except Exception as err:  # an adapter bug must not take the companion's turn down
            log.exception("vision query %s failed", query.id)
            return QueryResult.fail(query.id, f"vision failed: {err}")
        picture = VisionPicture(
            image=base64.b64encode(frame.jpeg).decode("ascii"), mime="image/jpeg", width=frame.width,
            height=frame.height, timestamp=frame.timestamp,
            # A sentence a model can read as is, and the measurements for clients that want the numbers.
            description=frame.description.summary if frame.description is not None else None,
            description_details=frame.description)
        return QueryResult.ok(query.id, picture.body())


class SpeakResponder:
    """Answers ``speak`` queries when the utterance has finished (or was skipped, interrupted, failed)."""

    query_type: str = "speak"

    def __init__(self, speaker: Speaker, voices: VoiceMap | None = None) -> None:
        self._speaker = speaker
        self.voices = voices or VoiceMap()
        self._lines: collections.OrderedDict[tuple[str, str], asyncio.Event] = collections.OrderedDict()

    async def respond(self, query: Query) -> QueryResult:
        try:
            request = SpeakRequest.of(query)
        except QueryBodyInvalid as err:
            return QueryResult.fail(query.id, str(err))
        line = request.message_id
        cut = None if line is None else self._line(query.params.from_, line)
        if cut is not None and cut.is_set():
            return _interrupted(query, "an earlier part of the line was cut off")
        utterance = Utterance(text=request.message, emotion=request.emotion, speaker_id=query.params.from_,
                              voice=request.voice or self.voices.voice_for(query.params.from_), rate=request.rate)
        try:
            if cut is None:
                result = await self._speaker.speak(utterance)
            else:
                said = await _unless(self._speaker.speak(utterance), cut)
                if said is None:
                    return _interrupted(query, "an earlier part of the line was cut off")
                result = said
                if result.interrupted:
                    cut.set()
        except asyncio.CancelledError:
            if cut is not None:
                cut.set()  # the parts queued after it are dropped too
            raise
        except DeviceUnavailable as err:
            return QueryResult.fail(query.id, str(err))
        except Exception as err:
            log.exception("speak query %s failed", query.id)
            return QueryResult.fail(query.id, f"speak failed: {err}")
        return result.answer(query)

    def _line(self, speaker: str, line: str) -> asyncio.Event:
        """The event set once a part of ``speaker``'s line ``line`` was cut off (the newest lines are kept)."""
        key = (speaker, line)
        event = self._lines.get(key)
        if event is None:
            event = self._lines[key] = asyncio.Event()
            while len(self._lines) > _LINES_KEPT:
                self._lines.popitem(last=False)
        return event


async def _unless(speech: Coroutine[Any, Any, SpeakResult], cut: asyncio.Event) -> SpeakResult | None:
    """The result of ``speech``, or ``None`` (the speech cancelled) when ``cut`` is set first."""
    speaking = asyncio.ensure_future(speech)
    watching = asyncio.ensure_future(cut.wait())
    try:
        await asyncio.wait([speaking, watching], return_when=asyncio.FIRST_COMPLETED)
    finally:
        watching.cancel()
        if not speaking.done():
            speaking.cancel()
        await asyncio.wait([speaking, watching])  # never leave a task behind, even when cancelled ourselves
    if speaking.cancelled():
        return None
    return speaking.result()


def _interrupted(query: Query, reason: str) -> QueryResult:
    return SpeakResult(success=False, interrupted=True, reason=reason).answer(query)

