"""The window comes back as the user left it, under a real window manager (icewm on Xvfb), as a person has it.

``madoi`` runs as a program: the window manager moves, resizes and maximizes it, the user quits with Ctrl+Q or the
window's close, and the next start must show the same place and size, maximized or not; un-maximizing a window
that came back maximized gives back the size it had before (with icewm and fluxbox it once stayed as large as
the screen).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import PYTHON, REPO
from tests.ui.x_desktop import MISSING, SCREEN, WHY_MISSING, desktop
from tests.waiting import eventually

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)
LEFT_AT = (200, 150, 1000, 640)  # x, y, width, height of the window's inside


class Madoi:
    """``madoi`` started as a user starts it, and its window as the X server has it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.process = subprocess.Popen([PYTHON, "-m", "app.main"], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("madoi: ready"), line + self._stderr()
        self.window = eventually(self._find_window, lambda w: w is not None)
        assert self.window is not None, "no window of madoi's is managed"

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        return self.process.stderr.read() if self.process.stderr else ""

    def _x(self, *args: str) -> str:
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=30, check=False).stdout

    def _find_window(self) -> str | None:
        for line in self._x("wmctrl", "-lp").splitlines():  # id, desktop, pid, host, title
            parts = line.split(None, 4)
            if len(parts) == 5 and parts[2] == str(self.process.pid) and "Madoi" in parts[4]:
                return parts[0]
        return None

    def geometry(self) -> tuple[int, int, int, int]:
        values = dict(line.split("=", 1) for line in self._x("xdotool", "getwindowgeometry", "--shell",
                                                              str(int(self.window, 16))).split())
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])

    def settle_at(self, wanted: Callable[[tuple[int, int, int, int]], bool]) -> tuple[int, int, int, int]:
        return eventually(self.geometry, wanted)

    def maximized(self, on: bool) -> None:
        """The window manager's maximize button (or un-maximize)."""
        self._x("wmctrl", "-i", "-r", self.window, "-b", f"{'add' if on else 'remove'},maximized_vert,maximized_horz")

    def place(self, x: int, y: int, width: int, height: int) -> None:
        wid = str(int(self.window, 16))
        self._x("xdotool", "windowsize", wid, str(width), str(height))
        self._x("xdotool", "windowmove", wid, str(x), str(y))

    def quit_with_ctrl_q(self) -> None:
        self._x("xdotool", "windowactivate", "--sync", str(int(self.window, 16)))
        self._x("xdotool", "key", "ctrl+q")
        self._wait_closed()

    def close_window(self) -> None:
        """The window's close button (the window manager asks the window to close)."""
        self._x("wmctrl", "-i", "-c", self.window)
        self._wait_closed()

    def _wait_closed(self) -> None:
        out, err = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, err
        assert "madoi: stopped" in out


def _fills_screen(g: tuple[int, int, int, int]) -> bool:
    return g[2] == SCREEN[0] and g[3] > SCREEN[1] - 80  # icewm keeps its task bar


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
def test_size_and_place_come_back_as_left_maximized_or_not(tmp_path: Path) -> None:
    with desktop(tmp_path) as env:
        first = Madoi(env)
        first.place(*LEFT_AT)
        assert first.settle_at(lambda g: g == LEFT_AT) == LEFT_AT
        time.sleep(1)  # the person pauses (a move and a maximize in one instant reach Qt as one change)
        first.maximized(True)
        assert _fills_screen(first.settle_at(_fills_screen))
        first.quit_with_ctrl_q()

        again = Madoi(env)
        assert _fills_screen(again.settle_at(_fills_screen)), "it was left maximized"
        again.maximized(False)
        assert again.settle_at(lambda g: g == LEFT_AT) == LEFT_AT, "un-maximized, it has the size it was left at"
        again.place(300, 100, 900, 600)
        assert again.settle_at(lambda g: g == (300, 100, 900, 600)) == (300, 100, 900, 600)
        again.close_window()

        last = Madoi(env)
        assert last.settle_at(lambda g: g == (300, 100, 900, 600)) == (300, 100, 900, 600)
        last.quit_with_ctrl_q()
