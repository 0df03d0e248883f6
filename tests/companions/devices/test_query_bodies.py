"""The typed query bodies (companions/devices/query_bodies.py): what the action sends is what the responder reads, the
wire keeps the reference's shape, and a hostile body gets a reason, never an exception."""

from __future__ import annotations

import pytest

from companions.devices.query_bodies import QueryBodyInvalid, SpeakRequest, SpeakResult, VisionPicture, VisionRequest
from companions.wire.protocol import Query, QueryResult
from companions.wire.query_broker import SPOKEN_CHARS_PER_S, client_grace


def speak(body: object) -> Query:
    return Query.create(from_="akari", type="speak", body=body)  # type: ignore[arg-type]


def test_a_line_goes_on_the_wire_as_the_reference_sends_it() -> None:
    assert SpeakRequest(message="こんにちは").body() == {"message": "こんにちは", "emotion": "neutral"}
    part = SpeakRequest(message="はい。", emotion="happy", voice="ja", message_id="m1", part=2)
    assert part.body() == {"message": "はい。", "emotion": "happy", "voice": "ja", "messageId": "m1", "part": 2}


def test_what_the_action_sends_is_what_the_responder_reads() -> None:
    sent = SpeakRequest(message="Hello.", emotion="sad", voice="en", rate=180, message_id="line", part=1,
                        final=False)
    assert SpeakRequest.of(speak(sent.body())) == sent
    assert SpeakRequest.of(speak({"text": "from a client that says text"})).message == "from a client that says text"
    assert SpeakRequest.of(speak({"message": "hi", "theirs": 1})).message == "hi"  # a client's own field: ignored


@pytest.mark.parametrize(("body", "reason"), [
    ({"message": 3}, "speak: 'message' must be a non-empty string"),
    ({"message": "hi", "messageId": ""}, "speak: 'messageId' must be a non-empty string"),
    ({"message": "hi", "part": -1}, "speak: 'part' must be a whole number from 0"),
    ({"message": "hi", "part": True}, "speak: 'part' must be a whole number from 0"),
    ({"message": "hi", "final": "yes"}, "speak: 'final' must be true or false"),
    ({"message": "hi", "rate": True}, "speak: 'rate' must be words per minute, 50 to 400"),
    ({"message": "hi", "emotion": {"deep": []}}, "speak: unknown emotion {'deep': []} (one of happy, sad, angry, "
                                                 "neutral)"),
])
def test_a_bad_speak_body_says_why(body: dict[str, object], reason: str) -> None:
    with pytest.raises(QueryBodyInvalid) as refused:
        SpeakRequest.of(speak(body))
    assert str(refused.value) == reason


def test_the_grace_for_a_client_that_says_the_line_counts_its_length_and_nothing_else() -> None:
    assert client_grace(speak({"message": "x" * 50}), 3.0) == pytest.approx(3.0 + 50 / SPOKEN_CHARS_PER_S)
    assert client_grace(speak({"message": ["not", "text"]}), 3.0) == 3.0
    assert client_grace(Query.create(from_="akari", type="vision", body={"message": "x" * 50}), 3.0) == 3.0


def test_vision_bodies() -> None:
    assert VisionRequest().body() == {}  # the reference's clients send none
    assert VisionRequest.of(Query.create(from_="akari", type="vision", body={"describe": False})).describe is False
    with pytest.raises(QueryBodyInvalid, match="'describe' must be true or false"):
        VisionRequest.of(Query.create(from_="akari", type="vision", body={"describe": "no"}))
    # A client's answer: each field kept only when it has its kind.
    picture = VisionPicture.read({"image": "QUJD", "mime": 7, "description": ["?"], "width": 640, "x": 1})
    assert picture.image_url() == "data:image/jpeg;base64,QUJD"
    assert picture.description is None
    assert picture.width == 640
    assert VisionPicture.read({"image": "data:image/png;base64,QUJD"}).image_url() == "data:image/png;base64,QUJD"
    assert VisionPicture.read(None).image_url() is None


def test_a_speak_answer_goes_on_the_wire_as_before_and_is_read_back_typed() -> None:
    said = SpeakResult(success=True, duration_s=1.23456, voice="ja", spoken_text="こんにちは", wav_path="/tmp/1.wav")
    answer = said.answer(speak({"message": "今日は"}))
    assert answer.result is not None
    assert answer.result.success
    assert answer.result.body == {"duration": 1.235, "interrupted": False, "skipped": False, "voice": "ja",
                                  "wav": "/tmp/1.wav"}
    read = SpeakResult.of(answer)
    assert (read.success, read.duration_s, read.voice, read.wav_path) == (True, 1.235, "ja", "/tmp/1.wav")
    # A client's answer of its own shape is read field by field; a failed query's error is the reason.
    client = QueryResult.ok("q1", {"duration": "long", "skipped": True, "reason": "said by the client", "x": 1})
    assert SpeakResult.of(client) == SpeakResult(success=True, skipped=True, reason="said by the client")
    failed = SpeakResult.of(QueryResult.fail("q2", "no responder for 'speak'"))
    assert (failed.success, failed.reason) == (False, "no responder for 'speak'")
