"""The main window mid-conversation, for scripts/screenshots.py: three scripted companions on a real runtime.

Akari has spoken (her voice rendered to a WAV file), Souta is composing his answer (the streamed text shows in the
chat), and the turn-taking view shows everyone's vote on Akari's message. The camera reads a generated video file.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtWidgets import QWidget

from companions.llm.scripted import say, stall
from tests.app.media import write_test_video
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from ui.window.main_window import MainWindow

SCENES = {
    "ja": {
        "user": "こんばんは！昨日の夜、空を見た人いる？",
        "akari": ("流れ星の話がしたい", "見た見た！流れ星がいくつも流れてて、思わず願いごとしちゃった。"),
        "hina": "わたしも見たかったなあ",
        "souta": ("しし座流星群の話ができる", "昨日はしし座流星群の極大日だったんだ。一時間に"),
    },
    "en": {
        "user": "Good evening! Did anyone look at the sky last night?",
        "akari": ("I want to talk about the meteors", "I did! Meteors kept falling, so I made a wish on one."),
        "hina": "I wish I had seen them",
        "souta": ("I know about the Leonids", "Last night was the peak of the Leonid shower. About"),
    },
}


def _environment(home: Path, language: str, theme: str) -> None:
    """The runtime's settings for one shot, through the environment (as a user would override them)."""
    home.mkdir(parents=True, exist_ok=True)
    os.environ["MADOI_HOME"] = str(home)  # a home of its own: the runtime opens the home's latest conversation
    os.environ["MADOI_LANGUAGE"] = language
    os.environ["MADOI_GENERAL_THEME"] = theme  # the window applies the theme of its settings
    os.environ["MADOI_CAMERA"] = str(write_test_video(home / "camera.avi", frames=90))


async def shoot_main_window(out: Path, language: str, name: str, home: Path, *, theme: str = "light",
                            tab: int = 0, before_shot: Callable[[MainWindow], Awaitable[None]] | None = None,
                            size: tuple[int, int] = (1360, 820)) -> Path:
    """Renders the window of a runtime on ``home`` in ``language`` and ``theme`` mid-conversation to
    ``out/name.png``."""
    scene = SCENES[language]
    _environment(home, language, theme)
    cast = scripted_cast()
    akari_reason, akari_line = scene["akari"]
    souta_reason, souta_start = scene["souta"]
    votes(cast["akari"], ("speak", 8, akari_reason))
    lines(cast["akari"], say(akari_line))
    votes(cast["hina"], ("speak", 4, scene["hina"]), ("listen", 3, scene["hina"]))
    votes(cast["souta"], ("listen", 2), ("speak", 7, souta_reason))
    lines(cast["souta"], stall(text_first=souta_start))
    async with scripted_runtime(cast) as runtime:
        window = MainWindow(runtime)
        window.resize(*size)
        window.side.setCurrentIndex(tab)
        window.show()
        await window.attach()
        runtime.parts.conversations.send(scene["user"])
        # What streams shows sentence by sentence, each once it passed the checks: Souta's first sentence.
        first_sentence = souta_start.split("。")[0].split(". ")[0]
        await until(window.chat.composing_changed, lambda: first_sentence in window.chat.view.toPlainText(), 30)
        await until(window.turns.rendered, lambda: window.turns.view.turn is not None
                    and window.turns.view.turn.number == 2, 30)
        if before_shot is not None:
            await before_shot(window)
        await asyncio.sleep(0.3)  # the loop (Qt's) paints every panel's last update; no processEvents in a task
        path = out / f"{name}.png"
        if not window.grab().save(str(path)):
            raise SystemExit(f"could not write {path}")
        await dispose(window)
    return path


async def dispose(*widgets: QWidget) -> None:
    """Closes ``widgets`` and deletes them now, as pytest-qt does after a test, before the next window is built.
    Windows that were only closed were left for the cyclic collector to destroy at some later moment, and the script
    crashed in a later window's ``MainWindow.__init__`` (SIGSEGV: 4 of 6 runs of its main windows, 2 of 4 whole
    runs; with this, 0 of 6 and 0 of 6). The app builds one window per process."""
    for widget in widgets:
        widget.close()
        widget.deleteLater()
    await asyncio.sleep(0.05)  # the loop runs the deferred deletes
    gc.collect()


async def search_for(window: MainWindow, text: str) -> None:
    """Shows the search tab with ``text`` searched once the sample knowledge is indexed."""
    panel = window.search_panel
    service = window.runtime.parts.search
    if service is None:
        raise SystemExit("search is not available: " + "; ".join(window.runtime.loaded.problems))
    await until(panel.index_changed, lambda: service.indexed is not None, 120)
    panel.query.setText(text)
    panel.search()
    await panel.wait_idle()
