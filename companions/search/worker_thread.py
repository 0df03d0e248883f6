"""The search index's own thread: one daemon thread runs its jobs in order (an SQLite connection is used from the
thread that opened it), and the app can close without waiting for a file half-way through its embeddings.

A :class:`concurrent.futures.ThreadPoolExecutor` would do the same, but Python joins its threads when the process
exits, so quitting while a large file is being embedded (seconds on a slow machine) would hang the exit. The index
is derived data in SQLite (WAL): a transaction cut short by the exit is rolled back when the index next opens.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_Job = tuple[Future[Any], Callable[[], Any]]


class DaemonWorkerExecutor(Executor):
    """An :class:`~concurrent.futures.Executor` with one daemon thread, started on the first job."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        with self._lock:
            if self._shut:
                raise RuntimeError(f"{self._name}: cannot run a job after shutdown")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            future: Future[T] = Future()
            self._jobs.put((future, lambda: fn(*args, **kwargs)))
            return future

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, call = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as exc:  # handed to whoever awaits the job, as an executor does
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shut = True
            thread = self._thread
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
        self._jobs.put(None)
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join()
