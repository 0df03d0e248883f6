"""Looks through the camera as the user meets them in the window: a line in the chat for every look (the picture on
click), the status bar's camera switch (kept across restarts), and "Show them". A real started runtime with
scripted models and the real camera adapter on a generated video file."""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.devices.camera import OpenCVCamera
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.devices.ports import CameraLooked
from companions.llm.scripted import ScriptedCast, call, last_message_mentions, mentions, reply_json, say
from companions.llm.types import ChatRequest, ImagePart
from companions.wire.protocol import Query
from tests.app.media import write_test_video
from tests.ui.camera.chat_window import click_line
from tests.ui.conftest import signal_fired, started_runtime, switch_language
from tests.ui.open_window import open_window
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until
from ui.chat.looks import KEEP_PICTURES
from ui.window.main_thread_gc import MainThreadGC


@pytest.fixture(autouse=True)
def _gc_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """As in the app (ui/window/launch.py): these tests write the settings and encode frames on executor threads, and a
    collection that starts there must not free the windows' Qt objects (it crashes Qt)."""
    guard = MainThreadGC(qapp, interval_ms=200)
    yield
    guard.stop()


@pytest.fixture
def webcam(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    madoi_home.mkdir(parents=True, exist_ok=True)
    video = write_test_video(madoi_home / "webcam.avi", frames=30, face=True)
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    return video


def _the_others_listen(cast: ScriptedCast) -> None:
    """Hina and Souta listen whenever they are asked to vote (whether they are asked is not what these tests are
    about)."""
    for name in ("hina", "souta"):
        cast[name].lane("vote").always(reply_json({"state": "listen", "importance": 1, "reason": ""}))


def _camera(runtime: Runtime) -> OpenCVCamera:
    assert runtime.parts.devices is not None
    return runtime.parts.devices.camera


def _has_image(request: ChatRequest) -> bool:
    return any(isinstance(part, ImagePart) for m in request.messages if isinstance(m.content, list)
               for part in m.content)


async def test_a_companions_look_shows_in_the_chat_and_opens_the_picture(qtbot: QtBot, webcam: Path) -> None:
    cast = scripted_cast()
    lines(cast["akari"],
          call("vision"),
          say("A blue room with a face on the right.", expect=_has_image),  # the tool looks with the model's eyes
          call("speak", {"message": "見えるよ！青い部屋にいるね。"}, expect=last_message_mentions("blue room")))
    _the_others_listen(cast)
    async with scripted_runtime(cast) as runtime:
        window = await open_window(qtbot, runtime)
        camera = _camera(runtime)
        assert not camera.in_use  # the Camera panel is not on screen and nobody looks: closed
        assert window.camera_switch.text() == "カメラ オン"
        async with signal_fired(window.chat_looks.entry_added, timeout=20):
            runtime.parts.conversations.send("あかり、わたしが見える？", to=["akari"])
        await until(window.chat.message_shown, lambda: "青い部屋にいるね" in window.chat.view.toPlainText(), 20)
        text = window.chat.view.toPlainText()
        assert text.index("わたしが見える") < text.index("あかりがカメラで見ました") < text.index("青い部屋にいるね")
        [key] = window.chat_looks.keys()
        assert window.chat_looks.picture(key) is not None

        async with signal_fired(window.chat_looks.picture_opened):
            click_line(qtbot, window, "あかりがカメラで見ました")
        dialog = window.chat_looks.dialog
        assert dialog is not None
        assert dialog.isVisible()
        assert dialog.windowTitle().startswith("あかりが")
        pixmap = dialog.image.pixmap()
        assert (pixmap.width(), pixmap.height()) == (640, 480)  # the frame Akari saw, as she saw it
        assert "640 × 480" in dialog.details.text()
        assert "On-device description" in dialog.details.text()
        dialog.close()
        await until(window.camera_switch.light_changed, lambda: not camera.in_use)  # closed after the look
        assert not window.camera_switch.light
        cast.assert_used_up()
        window.close()


async def test_looks_come_back_after_the_chat_is_shown_again_and_only_the_last_pictures_are_kept(
        qtbot: QtBot, webcam: Path) -> None:
    async with started_runtime() as runtime:
        window = await open_window(qtbot, runtime)
        conversations = runtime.parts.conversations
        async with signal_fired(window.chat.message_shown):
            conversations.send("first")
        async with signal_fired(window.chat_looks.entry_added):
            await runtime.parts.broker.send_query(Query.create(from_="hina", type="vision"), timeout=5)
        async with signal_fired(window.chat.message_shown):
            conversations.send("second")
        switch_language("en")  # the chat shows the conversation again, in English
        await until(window.chat.history_loaded, lambda: "Hina looked" in window.chat.view.toPlainText())
        text = window.chat.view.toPlainText()
        assert text.index("first") < text.index("Hina looked through the camera") < text.index("second")

        # A new conversation that starts with a look: back to it, the look is still first; the other one's is gone.
        first_conversation = conversations.active_id
        async with signal_fired(window.chat.history_loaded):
            await conversations.new()
        async with signal_fired(window.chat_looks.entry_added):
            await runtime.parts.broker.send_query(Query.create(from_="souta", type="vision"), timeout=5)
        async with signal_fired(window.chat.message_shown):
            conversations.send("third")
        assert "Hina looked" not in window.chat.view.toPlainText()
        second_conversation = conversations.active_id
        assert first_conversation is not None
        assert second_conversation is not None
        for conversation in (first_conversation, second_conversation):
            async with signal_fired(window.chat.history_loaded):
                await conversations.switch(conversation)
        text = window.chat.view.toPlainText()
        assert "Hina looked" not in text
        assert text.index("Souta looked through the camera") < text.index("third")

        # More looks than pictures kept: the oldest lines lose their picture, and say so.
        for _ in range(KEEP_PICTURES):
            runtime.bus.publish(CameraLooked("souta", 0.0, b"\xff\xd8", 2, 2))
        await until(window.chat_looks.entry_added, lambda: len(window.chat_looks.keys()) == KEEP_PICTURES + 1)
        assert window.chat_looks.pictures_kept == KEEP_PICTURES
        first = window.chat_looks.keys()[0]
        assert window.chat_looks.picture(first) is None
        dialog = window.chat_looks.open_picture(first)
        assert dialog is not None
        assert "no longer kept" in dialog.details.text()
        dialog.close()
        window.close()


async def test_the_camera_switch_refuses_every_look_and_is_kept_across_restarts(
        qtbot: QtBot, webcam: Path, madoi_home: Path) -> None:
    cast = scripted_cast()
    lines(cast["akari"],
          call("vision"),
          call("speak", {"message": "カメラが切られているみたい。"},
               expect=last_message_mentions("the user turned the camera off")))
    _the_others_listen(cast)
    async with scripted_runtime(cast) as runtime:
        window = await open_window(qtbot, runtime)
        window.side.setCurrentWidget(window.camera_panel)  # the preview is on screen: the camera is open
        await until(window.camera_panel.frame_shown, lambda: window.camera_panel.state == "live")
        await until(window.camera_switch.light_changed, lambda: window.camera_switch.light)
        assert "使用中" in window.camera_switch.text()
        camera = _camera(runtime)

        async with signal_fired(window.camera_switch.switched):
            qtbot.mouseClick(window.camera_switch, Qt.MouseButton.LeftButton)
        assert not camera.switched_on
        assert window.camera_switch.text() == "カメラ オフ"
        assert not window.camera_switch.light
        assert tomllib.loads((madoi_home / "settings.toml").read_text("utf-8"))["camera"]["on"] is False
        await until(window.camera_panel.state_changed, lambda: window.camera_panel.state == "off")
        assert window.camera_panel.detail() == "カメラをオフにしました（ステータスバーのスイッチ）"
        read = camera.stats.frames_read
        await asyncio.sleep(0)

        async with signal_fired(window.chat_looks.entry_added, timeout=20):
            runtime.parts.conversations.send("あかり、見える？", to=["akari"])
        await until(window.chat.message_shown, lambda: "切られているみたい" in window.chat.view.toPlainText(), 20)
        assert "あかりがカメラで見ようとしましたが、カメラはオフです" in window.chat.view.toPlainText()
        assert camera.stats.frames_read == read  # not one frame was read for the refused look
        cast.assert_used_up()
        window.close()

    async with started_runtime() as again:  # the next start keeps the switch off
        assert not _camera(again).switched_on
        window = await open_window(qtbot, again)
        assert not window.camera_switch.on
        with pytest.raises(Exception, match="the user turned the camera off"):
            await _camera(again).capture(looker="akari")
        async with signal_fired(window.camera_switch.switched):
            qtbot.mouseClick(window.camera_switch, Qt.MouseButton.LeftButton)
        assert _camera(again).switched_on
        assert load_settings().settings.camera.on
        window.close()


async def test_show_them_puts_the_picture_into_the_turn(qtbot: QtBot, webcam: Path) -> None:
    cast = scripted_cast()
    lines(cast["akari"],
          call("speak", {"message": "うん、見えるよ！顔が一つ見える。"},
               expect=mentions("人が一人映っています")))  # the small model never calls vision, and still sees
    _the_others_listen(cast)
    async with scripted_runtime(cast) as runtime:
        window = await open_window(qtbot, runtime)
        window.chat.address.set_addressees(["akari"])
        window.chat.input.insertPlainText("あかり、わたしが見える？")
        async with signal_fired(window.show_them.shown, timeout=10):
            qtbot.mouseClick(window.show_them, Qt.MouseButton.LeftButton)
        assert window.chat.input.toPlainText() == ""
        await until(window.chat.message_shown, lambda: "顔が一つ見える" in window.chat.view.toPlainText(), 20)
        text = window.chat.view.toPlainText()
        assert text.index("カメラの映像を見せました") < text.index("わたしが見える") < text.index("顔が一つ見える")
        [key] = window.chat_looks.keys()
        assert window.chat_looks.picture(key) is not None
        stored = await runtime.store.messages(runtime.parts.conversations.active_id or 0)
        said = stored[0].message.params.message
        assert said.startswith("あかり、わたしが見える？\n［ユーザーがカメラの映像を見せています。端末上の説明（")
        assert stored[0].message.params.to == ["akari"]
        cast.assert_used_up()

        # The user's bubble shows the user's words; what the camera saw is folded under them, read on a click.
        key = stored[0].message.params.id
        view = window.chat.view
        [bubble] = [b for b in view.bubbles() if b.key == key]
        assert bubble.text == "あかり、わたしが見える？\n▸ カメラが見たもの"
        assert "端末上の説明" not in view.toPlainText()
        click_line(qtbot, window, "カメラが見たもの")
        assert view.fold_open(key)
        [bubble] = [b for b in view.bubbles() if b.key == key]
        assert bubble.text.startswith("あかり、わたしが見える？\n▾ カメラが見たもの\n"
                                      "［ユーザーがカメラの映像を見せています。端末上の説明")
        click_line(qtbot, window, "カメラが見たもの")
        assert not view.fold_open(key)
        assert "端末上の説明" not in view.toPlainText()
        assert window.message_actions.message_text(key) == said  # copied or edited as it was said
        # Shown again (after a restart, another conversation...): still the user's words, the look folded.
        switch_language("en")
        await until(window.chat.history_loaded, lambda: "what the camera saw" in view.toPlainText())
        [bubble] = [b for b in view.bubbles() if b.key == key]
        assert bubble.text == "あかり、わたしが見える？\n▸ what the camera saw"
        # Edited, the words change and the look stays folded; the companions remember it as written.
        await runtime.parts.conversations.revise(key, said.replace("わたしが見える？", "見える？"))
        await until(view.textChanged, lambda: "あかり、見える？" in view.toPlainText())
        [bubble] = [b for b in view.bubbles() if b.key == key]
        assert bubble.text == "あかり、見える？\n▸ what the camera saw"
        switch_language("ja")
        await until(window.chat.history_loaded, lambda: "カメラが見たもの" in view.toPlainText())

        # Switched off: nothing is shown or sent, the words stay in the box and the reason is said under it.
        await runtime.parts.devices.camera.switch(False) if runtime.parts.devices else None
        window.chat.input.insertPlainText("もう一度")
        async with signal_fired(window.show_them.failed):
            qtbot.mouseClick(window.show_them, Qt.MouseButton.LeftButton)
        assert window.chat.input.toPlainText() == "もう一度"
        assert window.chat.error.isVisible()
        assert window.chat.error.property("result") == "error"  # in red, as the box's other errors
        assert "カメラをオフにしました" in window.chat.error.text()
        window.close()
