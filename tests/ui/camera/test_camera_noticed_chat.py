"""What noticing saw, as the user meets it in the chat: a line in the conversation's flow for each thing noticed
("The companions noticed you came back · 14:02"), in the window's language, the frame that showed it on a click, and
the lines back in their place when the chat shows the conversation again. A real started runtime (scripted models
that only listen); the pictures are frames drawn and encoded with OpenCV, and in the last test the real camera
adapter and the real noticing read a generated video file with a face in it."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.devices.camera import encode_jpeg
from app.devices.faces import face_detection_problem
from companions.devices.presence import PresenceKind, PresenceNoticed
from companions.llm.scripted import ScriptedCast, reply_json
from tests.app.devices.room_videos import RIGHT, Scene, room, write_room_video
from tests.app.media import draw_face
from tests.ui.camera.chat_window import click_line
from tests.ui.conftest import signal_fired, switch_language
from tests.ui.open_window import open_window
from tests.ui.scripted_runtime import scripted_cast, scripted_runtime, until
from ui.window.main_thread_gc import MainThreadGC

JA: dict[PresenceKind, str] = {
    "arrived": "みんながあなたに気づきました",
    "returned": "みんながあなたが戻ったことに気づきました",
    "left": "みんながあなたが席を離れたことに気づきました",
    "second_person": "みんながあなたのそばにいる誰かに気づきました",
    "held_up": "みんながあなたが何かをかざしているのに気づきました",
    "dark": "みんなが明かりが消えたことに気づきました",
}
EN: dict[PresenceKind, str] = {
    "arrived": "The companions noticed you ·",
    "returned": "The companions noticed you came back",
    "left": "The companions noticed you left",
    "second_person": "The companions noticed someone with you",
    "held_up": "The companions noticed you holding something up",
    "dark": "The companions noticed the light went out",
}


@pytest.fixture(autouse=True)
def _gc_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """As in the app (ui/window/launch.py): a collection that starts on an executor thread must not free the
    windows' Qt objects."""
    guard = MainThreadGC(qapp, interval_ms=200)
    yield
    guard.stop()


def _everyone_listens() -> ScriptedCast:
    """Companions with a model (the window shows the chat, not the first-run card) who listen whenever asked."""
    cast = scripted_cast()
    for name in ("akari", "hina", "souta"):
        cast[name].lane("vote").always(reply_json({"state": "listen", "importance": 1, "reason": ""}))
    return cast


def _frame() -> tuple[bytes, int, int]:
    """A 640 x 480 room with a person in it, as a webcam JPEG."""
    image = np.clip(room(), 0, 255).astype(np.uint8)
    draw_face(image, RIGHT)
    return encode_jpeg(image), 640, 480


def _in_order(text: str, parts: list[str]) -> bool:
    """``parts`` are all in ``text``, each after the one before."""
    at = -1
    for part in parts:
        at = text.find(part, at + 1)
        if at < 0:
            return False
    return True


async def test_what_was_noticed_shows_in_the_chat_after_the_last_message_with_its_picture_in_both_languages(
        qtbot: QtBot, madoi_home: Path) -> None:
    jpeg, width, height = _frame()
    async with scripted_runtime(_everyone_listens()) as runtime:
        window = await open_window(qtbot, runtime)
        view = window.chat.view
        conversations = runtime.parts.conversations
        async with signal_fired(window.chat.message_shown):
            conversations.send("ただいま")
        at = time.time()
        async with signal_fired(window.chat_looks.entry_added):
            runtime.bus.publish(PresenceNoticed("returned", at, 1, 600.0, jpeg, width, height))
        minute = datetime.datetime.fromtimestamp(at).strftime("%H:%M")
        line = f"{JA['returned']} · {minute}"
        text = view.toPlainText()
        assert line in text
        assert text.index("ただいま") < text.index(line)  # after the last message, in the conversation's flow

        async with signal_fired(window.chat_looks.picture_opened):
            click_line(qtbot, window, JA["returned"])
        dialog = window.chat_looks.dialog
        assert dialog is not None
        assert dialog.isVisible()
        assert dialog.windowTitle() == f"{datetime.datetime.fromtimestamp(at).strftime('%H:%M:%S')}に気づいたもの"
        pixmap = dialog.image.pixmap()
        assert (pixmap.width(), pixmap.height()) == (640, 480)  # the frame that showed it
        assert dialog.details.text() == f"{line}\n640 × 480 ピクセル"  # what it showed, and the picture's size
        dialog.close()

        # Every kind has its line, one after the other after the messages they followed.
        async with signal_fired(window.chat.message_shown):
            conversations.send("またね")
        others: list[PresenceKind] = ["second_person", "held_up", "dark", "left", "arrived"]
        for kind in others:
            async with signal_fired(window.chat_looks.entry_added):
                runtime.bus.publish(PresenceNoticed(kind, time.time(), 1, 0.0, jpeg, width, height))
        order_ja = ["ただいま", JA["returned"], "またね", *(JA[kind] for kind in others)]
        assert _in_order(view.toPlainText(), order_ja)

        switch_language("en")  # the chat shows the conversation again, in English
        await until(window.chat.history_loaded, lambda: EN["dark"] in view.toPlainText())
        text = view.toPlainText()
        assert f"The companions noticed you came back · {minute}" in text
        assert _in_order(text, ["ただいま", EN["returned"], "またね", *(EN[kind] for kind in others)])
        assert not any(words in text for words in JA.values())
        async with signal_fired(window.chat_looks.picture_opened):
            click_line(qtbot, window, EN["returned"])  # still the picture after the chat was shown again
        dialog = window.chat_looks.dialog
        assert dialog is not None
        assert dialog.windowTitle().startswith("Noticed at ")
        assert dialog.image.pixmap().width() == 640
        dialog.close()
        window.close()


@pytest.fixture
def someone_sits_down(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The webcam: a room, and after a second someone in front of it; "let them notice you" on, as a user sets it."""
    madoi_home.mkdir(parents=True, exist_ok=True)
    video = write_room_video(madoi_home / "webcam.avi", [Scene(1), Scene(8, faces=(RIGHT,))], fps=10)
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    monkeypatch.setenv("MADOI_NOTICE", "true")
    return video


@pytest.mark.skipif(face_detection_problem() is not None, reason="this OpenCV build counts no faces")
async def test_noticing_through_the_camera_puts_the_line_and_the_frame_into_the_chat(
        qtbot: QtBot, someone_sits_down: Path) -> None:
    """Noticing on, a webcam (a video file) in front of which someone sits down: the chat says the companions noticed
    them, and the picture is the frame with them in it."""
    async with scripted_runtime(_everyone_listens()) as runtime:
        window = await open_window(qtbot, runtime)
        await until(window.chat_looks.entry_added, lambda: JA["arrived"] in window.chat.view.toPlainText(), 20)
        async with signal_fired(window.chat_looks.picture_opened):
            click_line(qtbot, window, JA["arrived"])
        dialog = window.chat_looks.dialog
        assert dialog is not None
        assert dialog.windowTitle().endswith("に気づいたもの")
        pixmap = dialog.image.pixmap()
        assert (pixmap.width(), pixmap.height()) == (640, 480)
        dialog.close()
        window.close()
