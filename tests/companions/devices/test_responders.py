"""The vision and speak responders over fakes of the Camera and Speaker ports (no OpenCV, no TTS here)."""

from __future__ import annotations

import asyncio
import base64

import pytest

from companions.devices.ports import CameraFrame, DeviceStatus, DeviceUnavailable, Utterance, VoiceMap
from companions.devices.query_bodies import Colour, SpeakResult, VisionDescription
from companions.devices.responders import SpeakResponder, VisionResponder
from companions.wire.protocol import Query
from companions.wire.query_broker import QueryBroker


class FakeCamera:
    def __init__(self, frame: CameraFrame | None = None, error: Exception | None = None) -> None:
        self.frame = frame
        self.error = error
        self.describe_requests: list[bool] = []

    @property
    def status(self) -> DeviceStatus:
        return DeviceStatus("camera", self.frame is not None)

    async def capture(self, *, describe: bool = False, looker: str = "") -> CameraFrame:
        self.describe_requests.append(describe)
        if self.error is not None:
            raise self.error
        assert self.frame is not None
        return self.frame


class FakeSpeaker:
    def __init__(self, result: SpeakResult | None = None) -> None:
        self.result = result or SpeakResult(success=True, duration_s=1.25, voice="ja")
        self.spoken: list[Utterance] = []
        self.release = asyncio.Event()
        self.release.set()
        self.started = asyncio.Event()

    @property
    def status(self) -> DeviceStatus:
        return DeviceStatus("speaker", True)

    async def speak(self, utterance: Utterance) -> SpeakResult:
        self.spoken.append(utterance)
        self.started.set()
        await self.release.wait()
        return self.result

    def interrupt(self) -> None:
        self.release.set()


DESCRIPTION = VisionDescription(source="on-device", faces=0, brightness=120.5, brightness_label="normal", motion=None,
                                motion_label="unknown (first look)", colours=(Colour(name="blue", hex="#2040c0",
                                                                                     share=0.75),),
                                summary="On-device description: 0 faces")
FRAME = CameraFrame(jpeg=b"\xff\xd8jpeg\xff\xd9", width=640, height=480, timestamp=1700000000.5,
                    description=DESCRIPTION)


async def test_vision_result_is_the_wire_body_the_reference_expects() -> None:
    camera = FakeCamera(FRAME)
    result = await VisionResponder(camera).respond(Query.create(from_="alice", type="vision"))
    assert result.succeeded
    assert result.result is not None
    body = result.result.body
    assert base64.b64decode(body["image"]) == FRAME.jpeg
    assert body["mime"] == "image/jpeg"
    assert (body["width"], body["height"], body["timestamp"]) == (640, 480, 1700000000.5)
    assert body["description"] == "On-device description: 0 faces"
    assert body["description_details"] == {  # every measurement, as made (a first look's motion is null)
        "source": "on-device", "faces": 0, "brightness": 120.5, "brightness_label": "normal", "motion": None,
        "motion_label": "unknown (first look)", "colours": [{"name": "blue", "hex": "#2040c0", "share": 0.75}],
        "summary": "On-device description: 0 faces"}
    assert camera.describe_requests == [True]


async def test_vision_description_can_be_turned_off_and_bad_options_are_errors() -> None:
    camera = FakeCamera(CameraFrame(jpeg=b"x", width=1, height=1, timestamp=0.0))
    result = await VisionResponder(camera).respond(Query.create(from_="a", type="vision", body={"describe": False}))
    assert result.result is not None
    assert "description" not in result.result.body
    assert "description_details" not in result.result.body
    assert camera.describe_requests == [False]
    bad = await VisionResponder(camera).respond(Query.create(from_="a", type="vision", body={"describe": "yes"}))
    assert bad.error == "vision: 'describe' must be true or false"


@pytest.mark.parametrize(("error", "message"), [
    (DeviceUnavailable("no camera: cannot open '0'"), "no camera: cannot open '0'"),
    (RuntimeError("boom"), "vision failed: boom"),
])
async def test_camera_failures_are_error_results(error: Exception, message: str) -> None:
    result = await VisionResponder(FakeCamera(error=error)).respond(Query.create(from_="a", type="vision"))
    assert not result.succeeded
    assert result.error == message


async def test_speak_passes_message_emotion_and_the_companions_voice() -> None:
    speaker = FakeSpeaker()
    responder = SpeakResponder(speaker, VoiceMap({"alice": "en"}))
    result = await responder.respond(Query.create(from_="alice", type="speak",
                                                  body={"message": "Hello!", "emotion": "happy"}))
    assert result.succeeded
    assert result.result is not None
    assert result.result.body["duration"] == 1.25
    assert speaker.spoken == [Utterance("Hello!", emotion="happy", voice="en", speaker_id="alice")]
    # A voice in the query wins over the map; no emotion means neutral.
    await responder.respond(Query.create(from_="alice", type="speak",
                                         body={"message": "Hi", "voice": "ja", "rate": 185}))
    assert speaker.spoken[-1] == Utterance("Hi", emotion="neutral", voice="ja", speaker_id="alice", rate=185)


@pytest.mark.parametrize(("body", "error"), [
    (None, "speak: 'message' must be a non-empty string"),
    ({"message": "  "}, "speak: 'message' must be a non-empty string"),
    ({"message": "hi", "emotion": "bored"}, "speak: unknown emotion 'bored' (one of happy, sad, angry, neutral)"),
    ({"message": "hi", "voice": 3}, "speak: 'voice' must be a string"),
    ({"message": "x" * 5001}, "speak: message longer than 5000 characters"),
    ({"message": "hi", "rate": 9000}, "speak: 'rate' must be words per minute, 50 to 400"),
    ({"message": "hi", "rate": "fast"}, "speak: 'rate' must be words per minute, 50 to 400"),
])
async def test_bad_speak_queries_are_clear_errors(body: dict[str, object] | None, error: str) -> None:
    speaker = FakeSpeaker()
    result = await SpeakResponder(speaker).respond(Query.create(from_="a", type="speak", body=body))
    assert result.error == error
    assert speaker.spoken == []


async def test_skipped_speech_is_success_and_interrupted_speech_is_not() -> None:
    skipped = SpeakResult(success=True, skipped=True, reason="no audio device: none found")
    result = await SpeakResponder(FakeSpeaker(skipped)).respond(
        Query.create(from_="a", type="speak", body={"message": "hi"}))
    assert result.succeeded
    assert result.result is not None
    assert result.result.body == {"duration": 0.0, "interrupted": False, "skipped": True, "voice": "",
                                  "reason": "no audio device: none found"}
    cut = SpeakResult(success=False, interrupted=True, duration_s=0.4, reason="interrupted")
    result = await SpeakResponder(FakeSpeaker(cut)).respond(
        Query.create(from_="a", type="speak", body={"message": "hi"}))
    assert result.result is not None
    assert not result.result.success
    assert result.result.body["interrupted"] is True


async def test_speak_query_through_the_broker_answers_only_when_speech_is_done(broker: QueryBroker) -> None:
    speaker = FakeSpeaker()
    speaker.release.clear()
    broker.register(SpeakResponder(speaker))
    broker.register(VisionResponder(FakeCamera(FRAME)))
    pending = asyncio.ensure_future(broker.send_query(
        Query.create(from_="alice", type="speak", body={"message": "hi"}), timeout=5))
    async with asyncio.timeout(5):
        await speaker.started.wait()
    assert not pending.done()
    speaker.interrupt()
    result = await pending
    assert result.succeeded
    vision = await broker.send_query(Query.create(from_="alice", type="vision"), timeout=5)
    assert vision.succeeded
