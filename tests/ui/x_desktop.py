"""A desktop of its own for tests that need a real X server and window manager: Xvfb with icewm on it."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO, subprocess_env
from tests.waiting import eventually

TOOLS = ("Xvfb", "icewm", "xdotool", "wmctrl")
MISSING = any(shutil.which(t) is None for t in TOOLS)
WHY_MISSING = "needs Xvfb, icewm, xdotool and wmctrl (scripts/bootstrap.sh dev)"
SCREEN = (1440, 900)


@contextlib.contextmanager
def desktop(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An X server of its own with icewm managing it; yields the environment for programs on it."""
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24",
                             "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as numbers:
        display = numbers.readline().strip()
    user = tmp_path / "user"
    user.mkdir()
    env = subprocess_env(tmp_path / "home", DISPLAY=f":{display}", HOME=str(user), QT_QPA_PLATFORM="xcb",
                         PYTHONPATH=str(REPO), PYTHONFAULTHANDLER="1")
    wm = subprocess.Popen(["icewm"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        managed = eventually(
            lambda: subprocess.run(["wmctrl", "-m"], env=env, capture_output=True, check=False).returncode,
            lambda rc: rc == 0)
        assert managed == 0, "icewm did not start"
        yield env
    finally:
        for process in (wm, xvfb):
            process.terminate()
            process.wait(timeout=10)


def x(env: dict[str, str], *args: str) -> str:
    """Runs an X tool (xdotool, wmctrl) on the desktop of ``env``; its output."""
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=30, check=False).stdout


# A program that saves the X screen it runs on as the PNG file it is given; prints the share of the screen painted
GRAB = textwrap.dedent(
    """
    import sys
    from PySide6.QtGui import QGuiApplication
    app = QGuiApplication(sys.argv)
    image = app.primaryScreen().grabWindow(0).toImage()
    image.save(sys.argv[1])
    samples = [image.pixel(x, y) & 0xFFFFFF for x in range(0, image.width(), 17) for y in range(0, image.height(), 17)]
    print(sum(1 for p in samples if p != 0) / len(samples))  # share of the (black) root window painted over
    """
)
