"""The collector runs on the GUI thread: cyclic garbage made anywhere is freed from the Qt timer, not a worker."""

from __future__ import annotations

import asyncio
import gc
import threading

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ui.window.main_thread_gc import MainThreadGC


class Cycle:
    def __init__(self) -> None:
        self.me = self


async def test_collections_happen_on_the_gui_thread_only(qtbot: QtBot, qapp: QApplication) -> None:
    gui_thread = threading.get_ident()
    threads: list[int] = []
    loop = asyncio.get_running_loop()
    collected_after_work = asyncio.Event()
    work_done = threading.Event()

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            threads.append(threading.get_ident())
            if work_done.is_set():
                loop.call_soon_threadsafe(collected_after_work.set)

    guard = MainThreadGC(qapp, interval_ms=10)
    gc.callbacks.append(record)
    try:
        assert not gc.isenabled()

        def allocate() -> None:
            for _ in range(50_000):
                Cycle()  # far past the generation-0 threshold: automatic gc would run right here
            work_done.set()

        await loop.run_in_executor(None, allocate)
        await asyncio.wait_for(collected_after_work.wait(), 5)
        assert set(threads) == {gui_thread}  # never in the worker
        assert guard.collections >= 1
    finally:
        gc.callbacks.remove(record)
        guard.stop()
        guard.deleteLater()
    assert gc.isenabled()
