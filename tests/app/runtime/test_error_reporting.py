"""Uncaught errors anywhere land in the data-dir log with their traceback, reach the callbacks, and the app lives on."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from app.runtime.error_reporting import ErrorReport, ErrorReporter, install_error_reporting
from companions.common.tasks import TaskSet
from tests.conftest import log_text


class Received:
    """Collects reports and lets a test wait for the next one."""

    def __init__(self) -> None:
        self.reports: list[ErrorReport] = []
        self.threads: list[int] = []
        self._event = asyncio.Event()

    def __call__(self, report: ErrorReport) -> None:
        self.reports.append(report)
        self.threads.append(threading.get_ident())
        self._event.set()

    async def next(self) -> ErrorReport:
        await asyncio.wait_for(self._event.wait(), 5)
        self._event.clear()
        return self.reports[-1]


async def test_an_error_in_a_thread_is_logged_and_delivered_on_the_loop_thread(log_file: Path) -> None:
    received = Received()
    reporter = install_error_reporting(asyncio.get_running_loop())
    reporter.add_callback(received)
    try:
        def work() -> None:
            raise RuntimeError("camera thread broke")

        thread = threading.Thread(target=work, name="camera")
        thread.start()
        report = await received.next()
        thread.join()
    finally:
        reporter.uninstall()
    assert report.summary == "RuntimeError: camera thread broke"
    assert report.where == "thread camera"
    assert received.threads == [threading.get_ident()]
    text = log_text(log_file)
    assert "camera thread broke" in text
    assert 'in work\n    raise RuntimeError("camera thread broke")' in text


async def test_a_failing_loop_callback_is_reported_and_the_loop_keeps_running(log_file: Path) -> None:
    received = Received()
    reporter = install_error_reporting(asyncio.get_running_loop())
    reporter.add_callback(received)
    try:
        def callback() -> None:
            raise ValueError("bad frame")

        asyncio.get_running_loop().call_soon(callback)
        report = await received.next()
        assert await asyncio.sleep(0, "still running") == "still running"
    finally:
        reporter.uninstall()
    assert report.summary == "ValueError: bad frame"
    assert "bad frame" in log_text(log_file)


async def test_sys_excepthook_reports_and_keyboard_interrupt_still_goes_to_the_previous_hook(
        log_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    previous: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, exc, tb: previous.append(kind))
    received = Received()
    reporter = ErrorReporter().install()
    reporter.add_callback(received)
    try:
        try:
            raise KeyError("slot")
        except KeyError:
            sys.excepthook(*sys.exc_info())  # what PySide6 does with an exception escaping a slot
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            sys.excepthook(*sys.exc_info())
    finally:
        reporter.uninstall()
    assert [r.summary for r in received.reports] == ["KeyError: 'slot'"]
    assert previous == [KeyboardInterrupt]
    assert sys.excepthook is not reporter._excepthook


async def test_a_failed_owned_task_that_was_only_logged_is_still_notified(log_file: Path) -> None:
    received = Received()
    reporter = install_error_reporting(asyncio.get_running_loop())
    reporter.add_callback(received)
    tasks = TaskSet("test")
    try:
        async def fail() -> None:
            raise OSError("disk full")

        tasks.spawn(fail(), name="writer")
        report = await received.next()
    finally:
        await tasks.aclose()
        reporter.uninstall()
    assert report.summary == "OSError: disk full"
    assert "disk full" in log_text(log_file)


def test_a_broken_callback_does_not_stop_the_others(log_file: Path) -> None:
    received = Received()
    reporter = ErrorReporter()

    def broken(report: ErrorReport) -> None:
        raise RuntimeError("notifier broke")

    reporter.add_callback(broken)
    reporter.add_callback(received)
    reporter.report(ZeroDivisionError("x"), "test")
    assert len(received.reports) == 1
    assert "notifier broke" in log_text(log_file)
