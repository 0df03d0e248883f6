"""The main window with the camera in use, for scripts/screenshots.py: Akari looks when asked, the user shows them
the camera with "Show them", the Camera panel is live and the status bar's switch says "in use".

Three scripted companions on a real runtime; the camera reads a generated video file with a drawn face.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from companions.llm.scripted import call, reply_json, say
from scripts.main_window_shots import dispose
from tests.app.media import write_test_video
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until
from ui.window.main_window import MainWindow

SCENES = {
    "en": {"ask": "Akari, can you see me?", "seen": "A room with someone on the right.",
           "answer": "I can see you! You're on the right.", "show": "Look, I'm waving!",
           "again": "Yes, I see one face! Hello there!"},
    "ja": {"ask": "あかり、わたしが見える？", "seen": "右のほうに人がいる部屋。",
           "answer": "見えるよ！右のほうにいるね。", "show": "見て、手を振ってるよ！",
           "again": "うん、顔が一つ見える！やっほー！"},
}


def _environment(home: Path, language: str, theme: str) -> None:
    """The runtime's settings for the shot, through the environment (as a user would override them)."""
    home.mkdir(parents=True, exist_ok=True)
    os.environ["MADOI_HOME"] = str(home)
    os.environ["MADOI_LANGUAGE"] = language
    os.environ["MADOI_GENERAL_THEME"] = theme
    os.environ["MADOI_CAMERA"] = str(write_test_video(home / "camera.avi", frames=90, face=True))


async def shoot_camera_window(out: Path, language: str, name: str, home: Path, *, theme: str = "light",
                              size: tuple[int, int] = (1360, 820)) -> Path:
    """Renders the scene to ``out/name.png``."""
    scene = SCENES[language]
    _environment(home, language, theme)
    cast = scripted_cast()
    lines(cast["akari"], call("vision"), say(scene["seen"]), call("speak", {"message": scene["answer"]}),
          call("speak", {"message": scene["again"]}))
    for other in ("hina", "souta"):  # they listen whenever asked
        cast[other].lane("vote").always(reply_json({"state": "listen", "importance": 1, "reason": ""}))
    async with scripted_runtime(cast) as runtime:
        window = MainWindow(runtime)
        window.resize(*size)
        window.side.setCurrentWidget(window.camera_panel)
        window.show()
        await window.attach()
        runtime.parts.conversations.send(scene["ask"], to=["akari"])
        await until(window.chat.message_shown, lambda: window.chat.message_count >= 2, 30)
        window.chat.address.set_addressees(["akari"])
        window.chat.input.insertPlainText(scene["show"])
        window.show_them.click()
        await until(window.chat.message_shown, lambda: window.chat.message_count >= 4, 30)
        await until(window.camera_panel.frame_shown, lambda: window.camera_switch.light, 10)
        await asyncio.sleep(0.3)  # the loop (Qt's) paints every panel's last update
        path = out / f"{name}.png"
        if not window.grab().save(str(path)):
            raise SystemExit(f"could not write {path}")
        await dispose(window)
    return path


NOTICED = {
    "ja": {"greeting": "あ、来てくれたんだ！いらっしゃい。今日はどんな一日だった？", "reason": "会いに来てくれたから"},
    "en": {"greeting": "Oh, you're here! Welcome back. How was your day?", "reason": "they came to see us"},
}


async def shoot_noticing_window(out: Path, language: str, name: str, home: Path, *, theme: str = "light",
                                size: tuple[int, int] = (1360, 820)) -> Path:
    """With "Let them notice you" on, the user sits down in front of the camera: the chat says the companions
    noticed (the picture on a click), Akari speaks first, and the Turns panel says why. Renders ``out/name.png``."""
    from companions.conversation.readmodel import ConversationReadModel
    from tests.app.devices.room_videos import RIGHT, Scene, write_room_video
    from tests.ui.scripted_runtime import votes

    scene = NOTICED[language]
    _environment(home, language, theme)
    os.environ["MADOI_NOTICE"] = "true"
    os.environ["MADOI_CAMERA"] = str(write_room_video(home / "desk.avi", [Scene(2), Scene(40, faces=(RIGHT,))]))
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, scene["reason"]))
    lines(cast["akari"], say(scene["greeting"]))
    for other in ("hina", "souta"):
        cast[other].lane("vote").always(reply_json({"state": "listen", "importance": 2, "reason": ""}))
    try:
        async with scripted_runtime(cast) as runtime:
            window = MainWindow(runtime)
            window.resize(*size)
            window.side.setCurrentWidget(window.turns)
            window.show()
            await window.attach()
            talk = ConversationReadModel()
            talk.attach(runtime.bus)
            await until(window.chat.message_shown, lambda: window.chat.message_count >= 1, 30)
            await talk.wait_for(lambda view: view.ended_reason == "spoke-first", 30)
            listed = window.conversations
            await until(listed.refreshed, lambda: listed.model.conversations()[0].message_count >= 1, 10)
            await asyncio.sleep(0.3)  # the loop (Qt's) paints every panel's last update
            path = out / f"{name}.png"
            if not window.grab().save(str(path)):
                raise SystemExit(f"could not write {path}")
            await dispose(window)
    finally:
        os.environ.pop("MADOI_NOTICE", None)
    return path
