"""The camera as the user controls it (app/devices/camera_controls.py): the switch kept in the settings, and what a
shown picture adds to the user's message; a real started runtime with the camera on a generated video file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from app.devices.camera import SWITCHED_OFF
from app.devices.camera_controls import RuntimeCamera, shown_message
from app.devices.vision_description import describe_frame, in_words
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.companion.lines import detect_language
from companions.devices.ports import CameraLooked, DeviceUnavailable
from companions.devices.shown_look import shown_look, shown_parts
from companions.wire.protocol import Message
from tests.app.media import write_test_video


@pytest.fixture
def webcam(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    madoi_home.mkdir(parents=True, exist_ok=True)
    video = write_test_video(madoi_home / "webcam.avi", frames=10, face=True)
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    return video


def test_a_shown_picture_is_described_in_the_language_of_the_users_words(tmp_path: Path) -> None:
    import cv2

    capture = cv2.VideoCapture(str(write_test_video(tmp_path / "shown.avi", frames=2, face=True)))
    try:
        ok, frame = capture.read()
    finally:
        capture.release()
    assert ok
    description, _ = describe_frame(np.asarray(frame, dtype=np.uint8))
    japanese = shown_message("あかり、見える？", in_words(description, "ja"), "ja")
    assert japanese.startswith("あかり、見える？\n［ユーザーがカメラの映像を見せています。端末上の説明")
    assert "AI モデルは画像を見ていません" in japanese
    assert detect_language(japanese) == "ja"  # the companions answer in Japanese, not in the description's English
    english = shown_message("Akari, can you see me?", in_words(description, "en"), "en")
    assert english.startswith("Akari, can you see me?\n[The user shows you what the camera sees. On-device")
    assert detect_language(english) == "en"
    assert shown_message("  ", "x", "ja").startswith("見て。\n")  # shown without a word
    assert description.summary == in_words(description, "en")


async def test_the_switch_applies_at_once_and_is_kept_for_the_next_start(madoi_home: Path, webcam: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        controls = RuntimeCamera(runtime)
        assert controls.is_on()
        await controls.set_on(False)
        assert not controls.is_on()
        with pytest.raises(DeviceUnavailable, match="the user turned the camera off"):
            await controls.show("見える？")
        assert runtime.parts.devices.camera.stats.opened == 0
    finally:
        await runtime.stop()
    assert not load_settings().settings.camera.on

    again = Runtime(load_settings())
    await again.start()
    try:
        assert again.parts.devices.camera.status.reason == SWITCHED_OFF
        await RuntimeCamera(again).set_on(True)
        assert again.parts.devices.camera.switched_on
    finally:
        await again.stop()
    assert load_settings().settings.camera.on


async def test_showing_looks_as_the_user_and_sends_what_was_seen(madoi_home: Path, webcam: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    seen: list[object] = []
    runtime.bus.subscribe(("messages", "events"), lambda item: seen.append(item)
                          if isinstance(item, (Message, CameraLooked)) else None)
    try:
        message_id = await RuntimeCamera(runtime).show("Akari, can you see me?", ["akari"])
        await asyncio.wait_for(runtime.bus.drain(), 5)
    finally:
        await runtime.stop()
    look, message = seen
    assert isinstance(look, CameraLooked)
    assert look.looker == runtime.settings.general.user_name
    assert look.jpeg
    assert isinstance(message, Message)
    assert message.params.id == message_id
    assert message.params.to == ["akari"]
    assert message.params.from_ == runtime.settings.general.user_name
    assert "One person is in view." in message.params.message or "People could not be counted" in message.params.message
    # The look is marked for the windows (companions/devices/shown_look.py): the user's words and the look apart.
    look = shown_look(message)
    assert look is not None
    assert look.startswith("[The user shows you what the camera sees. On-device")
    assert shown_parts(message) == ("Akari, can you see me?", look)
    stored = Message.model_validate_json(message.model_dump_json(by_alias=True))  # as it travels on the wire
    assert shown_look(stored) == look
