"""Uncaught errors: logged with their traceback (to the data-dir log set up by ``app.runtime.logs``), then handed to
callbacks (the window turns them into notifications). The app keeps running.

Covers the three places an error can escape to: ``sys.excepthook`` (which is also where PySide6 sends exceptions
raised in slots), ``threading.excepthook`` (executor and device threads) and the asyncio loop's exception handler
(tasks nobody awaited, failing callbacks). Callbacks always run on the loop thread: an error raised in another
thread is passed over with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

log = logging.getLogger("madoi.errors")


@dataclass(frozen=True)
class ErrorReport:
    where: str  # "slot or callback", "thread <name>", "asyncio task", ...
    summary: str  # one line: "ValueError: bad value"
    traceback: str

    @property
    def title(self) -> str:
        return f"Error in {self.where}"


ErrorCallback = Callable[[ErrorReport], None]


def _summary(exc: BaseException | None, fallback: str) -> str:
    if exc is None:
        return fallback
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class ErrorReporter:
    """Install once at startup; ``uninstall`` restores the previous hooks (tests do)."""

    def __init__(self) -> None:
        self._callbacks: list[ErrorCallback] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._previous_excepthook: Callable[..., Any] | None = None
        self._previous_threading_hook: Callable[..., Any] | None = None
        self._previous_loop_handler: Any = None
        self._log_handler: _LoggedErrorHandler | None = None
        self._log_handler_target = logging.getLogger()
        self.reports = 0

    def add_callback(self, callback: ErrorCallback) -> None:
        self._callbacks.append(callback)

    def remove_callback(self, callback: ErrorCallback) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> ErrorReporter:
        """Hooks ``sys``, ``threading`` and ``loop`` (if given: the loop callbacks are delivered on)."""
        self._previous_excepthook = sys.excepthook
        self._previous_threading_hook = threading.excepthook
        sys.excepthook = self._excepthook
        threading.excepthook = self._threading_hook
        if loop is not None:
            self._loop = loop
            self._loop_thread = threading.get_ident()
            self._previous_loop_handler = loop.get_exception_handler()
            loop.set_exception_handler(self._loop_handler)
        return self

    def watch_logged_errors(self, logger: logging.Logger | None = None) -> None:
        """Also notifies for errors that code caught and logged with a traceback (``log.exception``), such as a
        failed task in a ``TaskSet`` or a failing bus subscriber: they are already in the log file, the user
        should see them too."""
        self._log_handler = _LoggedErrorHandler(self)
        self._log_handler_target = logger or logging.getLogger()
        self._log_handler_target.addHandler(self._log_handler)

    def uninstall(self) -> None:
        if self._log_handler is not None:
            self._log_handler_target.removeHandler(self._log_handler)
            self._log_handler = None
        if self._previous_excepthook is not None:
            sys.excepthook = self._previous_excepthook
        if self._previous_threading_hook is not None:
            threading.excepthook = self._previous_threading_hook
        if self._loop is not None and not self._loop.is_closed():
            self._loop.set_exception_handler(self._previous_loop_handler)
        self._loop = None

    def report(self, exc: BaseException | None, where: str, message: str = "unexpected error") -> ErrorReport:
        """Logs ``exc`` with its traceback and notifies the callbacks; safe to call from any thread."""
        text = "".join(traceback.format_exception(exc)) if exc is not None else message
        report = ErrorReport(where=where, summary=_summary(exc, message), traceback=text)
        self.reports += 1
        log.error("uncaught error in %s: %s\n%s", where, report.summary, text.rstrip())
        self._deliver_threadsafe(report)
        return report

    def _deliver(self, report: ErrorReport) -> None:
        for callback in list(self._callbacks):
            try:
                callback(report)
            except Exception:  # a broken notifier must not recurse into the reporter
                log.exception("error callback %r failed", callback)

    def _excepthook(self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt | SystemExit) and self._previous_excepthook is not None:
            self._previous_excepthook(kind, exc, tb)
            return
        if exc.__traceback__ is None:
            exc = exc.with_traceback(tb)
        self.report(exc, "slot or callback")

    def _deliver_threadsafe(self, report: ErrorReport) -> None:
        loop = self._loop
        if loop is not None and threading.get_ident() != self._loop_thread and not loop.is_closed():
            loop.call_soon_threadsafe(self._deliver, report)
        else:
            self._deliver(report)

    def _threading_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        self.report(args.exc_value, f"thread {name}")

    def _loop_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, asyncio.CancelledError):
            return
        task = context.get("task") or context.get("future")
        where = f"task {task.get_name()}" if isinstance(task, asyncio.Task) else "asyncio callback"
        self.report(exc if isinstance(exc, BaseException) else None, where, str(context.get("message", "")))


class _LoggedErrorHandler(logging.Handler):
    def __init__(self, reporter: ErrorReporter) -> None:
        super().__init__(level=logging.ERROR)
        self._reporter = reporter

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == log.name or not record.exc_info or record.exc_info[1] is None:
            return  # the reporter's own records, and errors without an exception, are not notifications
        exc = record.exc_info[1]
        text = "".join(traceback.format_exception(*record.exc_info))
        self._reporter.reports += 1
        self._reporter._deliver_threadsafe(ErrorReport(where=record.name, summary=_summary(exc, record.getMessage()),
                                                        traceback=text))


def install_error_reporting(loop: asyncio.AbstractEventLoop | None = None, *,
                            watch_logged_errors: bool = True) -> ErrorReporter:
    """The one-liner for startup: a reporter hooked into ``sys``, ``threading``, ``loop`` and (by default) the
    root logger's ``log.exception`` records."""
    reporter = ErrorReporter().install(loop)
    if watch_logged_errors:
        reporter.watch_logged_errors()
    return reporter
