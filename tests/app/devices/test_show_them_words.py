"""Show them tells a Japanese user, in Japanese, that the paper says "HELLO MADOI" and that a
red ball is in the middle. A real started runtime, its camera on a generated video of that scene (a dim, noisy
webcam picture, as tests/app/devices/pictures.py makes it), the real Tesseract."""

from __future__ import annotations

import asyncio
from pathlib import Path

import cv2
import pytest

from app.devices import ocr
from app.devices.camera_controls import RuntimeCamera
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.companion.lines import detect_language
from companions.devices.shown_look import shown_look
from companions.wire.protocol import Message
from tests.app.devices.pictures import as_a_webcam_sees_it, paper_with_words, room, shaded_ball

pytestmark = pytest.mark.skipif(ocr.ocr_problem() is not None, reason=f"no OCR here: {ocr.ocr_problem()}")


def write_scene(path: Path, frames: int = 12) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (640, 480))
    assert writer.isOpened(), "OpenCV cannot write MJPG/AVI here"
    try:
        for index in range(frames):
            scene = paper_with_words(room(), "HELLO MADOI")
            shaded_ball(scene, (320, 300), 60)
            writer.write(as_a_webcam_sees_it(scene, light=0.75, seed=index))
    finally:
        writer.release()
    return path


@pytest.fixture
def webcam(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    madoi_home.mkdir(parents=True, exist_ok=True)
    video = write_scene(madoi_home / "webcam.avi")
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    monkeypatch.setenv("MADOI_LANGUAGE", "ja")
    return video


async def test_show_them_tells_a_japanese_user_what_the_paper_says_and_where_the_ball_is(
        madoi_home: Path, webcam: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    sent: list[Message] = []
    runtime.bus.subscribe(("messages",), lambda item: sent.append(item) if isinstance(item, Message) else None)
    try:
        await RuntimeCamera(runtime).show("見える？", ["akari"])
        await asyncio.wait_for(runtime.bus.drain(), 5)
    finally:
        await runtime.stop()
    [message] = sent
    look = shown_look(message)
    assert look is not None
    assert look.startswith("［ユーザーがカメラの映像を見せています。端末上の説明（AI モデルは画像を見ていません）：")
    assert "白い紙に「HELLO MADOI」と書いてあります。" in look
    assert "真ん中に赤いボールのような丸いものがあります。" in look
    assert "人は映っていません。" in look
    assert detect_language(message.params.message) == "ja"
    for jargon in ("faces", "/255", "%", "brightness", "OpenCV"):
        assert jargon not in look
