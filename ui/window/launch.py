"""Starts the window: QApplication, the qasync loop in the Qt main thread, the runtime, and orderly shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys

import qasync
from PySide6.QtCore import QSocketNotifier
from PySide6.QtWidgets import QApplication

from app.runtime.error_reporting import install_error_reporting
from app.runtime.runtime import Runtime, unless_stopped
from app.settings.model import SettingsStore
from ui.window.i18n import use_language
from ui.window.icons import app_icon
from ui.window.main_thread_gc import MainThreadGC
from ui.window.main_window import MainWindow, run_until_closed

READY_LINE = "madoi: ready"


def _install_signal_wakeup(app: QApplication, on_signal: object) -> tuple[socket.socket, socket.socket]:
    """SIGINT/SIGTERM close the window: the C handler writes to a socket, Qt notices, Python reacts."""
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno())
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, app)

    def drain() -> None:
        with contextlib.suppress(OSError):
            reader.recv(64)
        on_signal()  # type: ignore[operator]

    notifier.activated.connect(drain)
    app.setProperty("_madoiSignalNotifier", notifier)
    return reader, writer


def run_window(loaded: SettingsStore, only_companions: list[str] | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("Madoi")
    app.setOrganizationName("Madoi")
    app.setDesktopFileName("madoi")
    app.setWindowIcon(app_icon())
    use_language(loaded.settings.general.language, app)  # Qt's own texts (standard buttons) and self.tr()
    app.setQuitOnLastWindowClosed(False)  # the loop below decides when to stop, after an orderly shutdown
    MainThreadGC(app)  # Qt objects in reference cycles are freed on this thread only (see ui/window/main_thread_gc.py)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    reporter = install_error_reporting(loop)
    runtime = Runtime(loaded, only_companions=only_companions)  # `madoi --companions akari,hina`
    window = MainWindow(runtime, reporter=reporter)
    sockets = _install_signal_wakeup(app, window.close)

    async def main() -> None:
        closed = run_until_closed(window)
        window.show()
        try:
            # Closing the window (or SIGTERM, Ctrl+C) while the runtime starts ends the start: nothing waits on it.
            if await unless_stopped(runtime.start(), closed) and await unless_stopped(window.attach(), closed):
                print(f"{READY_LINE} (window; data in {loaded.paths.data_dir})", flush=True)
                await closed
        finally:
            await runtime.stop()
            print("madoi: stopped", flush=True)

    try:
        with loop:
            loop.run_until_complete(main())
    finally:
        signal.set_wakeup_fd(-1)
        for s in sockets:
            s.close()
    return 0
