"""A right-click on a companion in the roster, with real X input under a real window manager (icewm on Xvfb).

Before: a plain right-click muted the companion at once (3 of 3 tries) and the menu stayed only while the button
was held. The press opens the menu under the pointer (X11 asks for a context menu on the press); the release, a
moment later, must leave it open and choose nothing. Qt's own test events cannot show this: the X server decides
where the release lands, and the menu is a window of its own by then.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import PYTHON, REPO
from tests.ui.x_desktop import MISSING, WHY_MISSING, desktop, x

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)


class Roster:
    """tests/ui/roster_program.py on the desktop: the lines it prints, as they come."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.process = subprocess.Popen([PYTHON, str(REPO / "tests" / "ui" / "roster_program.py")], env=env,
                                        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put("<exited>")

    def next_line(self, timeout: float = 20.0) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("the roster program said nothing more") from None
        assert line != "<exited>", self.process.stderr.read() if self.process.stderr else ""
        return line

    def rows(self) -> dict[str, tuple[int, int]]:
        rows: dict[str, tuple[int, int]] = {}
        while len(rows) < 2:
            _, companion, px, py = self.next_line().split()
            rows[companion] = (int(px), int(py))
        return rows

    def menu(self) -> dict[str, tuple[int, int]]:
        """The entries of the menu that just opened, and where each is on the screen."""
        line = self.next_line()
        assert line.startswith("menu "), f"no menu opened; the program said {line!r}"
        entries = {}
        for entry in line.removeprefix("menu ").split("|"):
            text, _, at = entry.rpartition("@")
            px, py = at.split(",")
            entries[text] = (int(px), int(py))
        return entries

    def quit(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=20)


def test_a_plain_right_click_opens_the_menu_and_mutes_no_one(tmp_path: Path) -> None:
    with desktop(tmp_path) as env:
        roster = Roster(env)
        try:
            akari = roster.rows()["akari"]
            x(env, "xdotool", "mousemove", "--sync", *map(str, akari))
            # A person's click: the button goes down, the menu opens under the pointer, the button comes up.
            x(env, "xdotool", "mousedown", "3")
            entries = roster.menu()
            assert list(entries) == ["Mute", "Speak next", "Leave the conversation"]
            time.sleep(0.2)  # a person's click lasts about this long: the release comes after the menu is shown
            x(env, "xdotool", "mouseup", "3")
            # Still open, nothing chosen: the person now picks "Speak next" with the left button.
            x(env, "xdotool", "mousemove", "--sync", *map(str, entries["Speak next"]))
            x(env, "xdotool", "click", "1")
            assert roster.next_line() == "command force akari", "the right-click itself chose an entry"
            assert roster.next_line() == "menu closed"
        finally:
            roster.quit()
