"""The roster panel alone in a window of its own, as a program: for tests that drive it with real X input under a
real window manager (tests/ui/roster/test_roster_mouse.py), where the X server, not Qt, decides where a click lands.

It prints, one per line on stdout: ``row <id> <x> <y>`` (the centre of each companion's row on the screen) once the
window is shown and active, then ``menu <text>@<x>,<y>|...`` when a row's menu opens (each entry and its centre on
the screen), ``menu closed`` when it closes and ``command <...>`` for every command the panel gives (mute, force,
present). It quits when stdin closes.
"""

from __future__ import annotations

import asyncio
import sys

import qasync
from PySide6.QtCore import QObject, QSocketNotifier, QTimer
from PySide6.QtWidgets import QApplication, QMenu

from companions.conversation.readmodel import ConversationView
from companions.wire.bus import InProcessBus
from tests.ui.fakes import FakeControl, FakePeople
from ui.roster.roster import RosterPanel


class _Nowhere:
    def network(self) -> list[object]:
        return []

    def guests(self) -> list[object]:
        return []


class _PrintingControl(FakeControl):
    def mute(self, companion_id: str, muted: bool) -> None:
        print(f"command mute {companion_id} {muted}", flush=True)

    def force(self, companion_id: str) -> None:
        print(f"command force {companion_id}", flush=True)

    def set_present(self, companion_id: str, present: bool) -> None:
        print(f"command present {companion_id} {present}", flush=True)


class _MenuWatch(QObject):
    def __init__(self, panel: RosterPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.shown: QMenu | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(20)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        menu = self.panel.menu
        if menu is not None and menu is not self.shown and menu.isVisible():
            self.shown = menu
            entries = []
            for action in menu.actions():
                centre = menu.mapToGlobal(menu.actionGeometry(action).center())
                entries.append(f"{action.text()}@{centre.x()},{centre.y()}")
            print("menu " + "|".join(entries), flush=True)
        elif self.shown is not None and menu is None:
            self.shown = None
            print("menu closed", flush=True)


async def show(app: QApplication) -> None:
    control = _PrintingControl(ConversationView(present=("akari", "hina")))
    people = FakePeople({"akari": "Akari", "hina": "Hina"})
    panel = RosterPanel(InProcessBus(), control, people, _Nowhere())  # type: ignore[arg-type]
    panel.setWindowTitle("roster")
    panel.resize(260, 300)
    panel.move(100, 100)
    panel.show()
    panel.attach()
    watch = _MenuWatch(panel)
    stdin = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)

    def finish() -> None:
        if not sys.stdin.readline():
            app.quit()

    stdin.activated.connect(finish)

    def report() -> None:
        if not panel.isActiveWindow():
            panel.activateWindow()
            QTimer.singleShot(50, report)
            return
        for companion in panel.companion_ids():
            index = panel.index_of(companion)
            assert index is not None
            centre = panel.list.viewport().mapToGlobal(panel.list.visualRect(index).center())
            print(f"row {companion} {centre.x()} {centre.y()}", flush=True)

    QTimer.singleShot(200, report)
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    app.aboutToQuit.connect(lambda: closed.done() or closed.set_result(None))
    await closed
    panel.detach()
    del watch


def main() -> int:
    app = QApplication(sys.argv)
    qasync.run(show(app))
    return 0


if __name__ == "__main__":
    sys.exit(main())
