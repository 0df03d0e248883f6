"""Qt fixtures: every UI test is an ``async def`` that runs *inside* a qasync loop on pytest-qt's QApplication.

Keeping the loop running for the whole test matters: qasync dispatches asyncio callbacks from Qt events, and a
callback that fires while no loop is "running" (between two run_until_complete calls) breaks asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Iterator

import pytest
import qasync
from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QApplication

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.llm.health import model_health
from ui.window.i18n import SOURCE_LANGUAGE, deliver_language_change, use_language, window_language


def _qasync_loop() -> asyncio.AbstractEventLoop:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as in ui.window.launch: closing a window must not stop the loop under a test
    return qasync.QEventLoop(app)


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_gui_thread() -> Iterator[None]:
    """Qt wrappers caught in reference cycles must die here, not in whichever thread next runs the collector
    (an executor thread destroying widgets crashes Qt); see ui/window/main_thread_gc.py."""
    yield
    gc.collect()


@pytest.fixture(autouse=True)
def _no_model_known_down() -> Iterator[None]:
    """A model server an earlier test left unreachable (companions/llm/health.py keeps the process's record) is not
    this test's: its chat would hold the messages sent."""
    model_health.forget()
    yield
    model_health.forget()


@pytest.fixture(autouse=True)
def _english_after_each_test() -> Iterator[None]:
    """The window's language is the application's: a test that switched it leaves English behind."""
    yield
    if window_language() != SOURCE_LANGUAGE:
        switch_language(SOURCE_LANGUAGE)


def switch_language(language: str) -> None:
    """Makes ``language`` the application's, as a save in the settings does, and delivers the ``LanguageChange``
    events Qt posted at once (the loop would a moment later), so a test reads the widgets' new words."""
    use_language(language)
    deliver_language_change()


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, object]:
    """UI tests run on a qasync loop (the same kind of loop as the app)."""
    return {"qasync": _qasync_loop}


@contextlib.asynccontextmanager
async def signal_fired(signal: SignalInstance, timeout: float = 5.0) -> AsyncIterator[None]:
    """Waits, after the block, until ``signal`` fires (it is connected before the block runs)."""
    fired: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def fire(*_: object) -> None:
        if not fired.done():
            fired.set_result(None)

    signal.connect(fire)
    try:
        yield
        await asyncio.wait_for(fired, timeout)
    finally:
        signal.disconnect(fire)


@contextlib.asynccontextmanager
async def started_runtime() -> AsyncIterator[Runtime]:
    """A started runtime on the MADOI_HOME of the ``madoi_home`` fixture, stopped at the end of the block.

    Not a fixture on purpose: setup, body and teardown must share one run of the loop (see the module doc).
    """
    rt = Runtime(load_settings())
    await rt.start()
    try:
        yield rt
    finally:
        await rt.stop()
