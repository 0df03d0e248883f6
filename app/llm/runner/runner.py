"""The embedded model runner: one GGUF model served by llama.cpp in a child process Madoi owns.

:class:`ModelRunner` starts ``app.llm.runner.child`` (llama-cpp-python's OpenAI-compatible server) on a free
loopback port with a random API key, and hands back the :class:`Endpoint` once ``GET /v1/models`` answers: every
part of Madoi that talks to an OpenAI-compatible server talks to it unchanged, and all companions share the one
loaded model. A crash of the model never takes the window down; the runner notices it and starts the model again
(bounded by a :class:`RestartPolicy`); a crash by a fault moves it to a safer configuration
(:data:`~app.llm.runner.options.SAFER_STEPS`). Every change of :class:`RunnerStatus` goes to the subscribers, with
the reason in plain words.

Everything here runs on the caller's event loop (asyncio or qasync): the child is started with
:class:`subprocess.Popen` from the loop's thread (on Linux the child dies with the thread that started it, and the
loop's thread lives as long as the app), and one daemon thread per child waits for its exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx

import app as _app_package
from app.llm.runner.exits import ChildExit, read_tail
from app.llm.runner.options import CHILD_FLAG, CONFIG_ENV, ChildConfig, RunnerOptions, safer
from companions.common.private_files import new_private_dir, private_file

log = logging.getLogger(__name__)

LOG_NAME: Final = "model-runner.log"
ChildCommand = Callable[[], Sequence[str]]
"""Builds the command that starts the child (the seam tests use to put a crashing command in front of it)."""


def child_command() -> list[str]:
    """``python -m app.llm.runner.child`` with this interpreter; in a frozen bundle (no ``-m`` there) the bundle's
    own program with :data:`CHILD_FLAG` (app/main.py hands it to the child before importing anything else)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_FLAG]
    return [sys.executable, "-m", "app.llm.runner.child"]


class RunnerState(enum.StrEnum):
    STARTING = "starting"
    READY = "ready"
    CRASHED = "crashed"
    RESTARTING = "restarting"
    STOPPED = "stopped"
    FAILED = "failed"
    """Not running and not trying again: the model cannot start, or it crashed too often."""


@dataclass(frozen=True)
class Endpoint:
    """Where the model answers: an OpenAI-compatible ``base_url`` (ends in ``/v1``), its model id, its key."""

    base_url: str
    model: str
    api_key: str


@dataclass(frozen=True)
class RunnerStatus:
    state: RunnerState
    reason: str
    options: RunnerOptions
    endpoint: Endpoint | None = None
    restarts: int = 0


@dataclass(frozen=True)
class RestartPolicy:
    """At most ``max_restarts`` restarts after crashes within ``window_s`` seconds, waiting ``first_delay_s``
    before the first and twice as long before each next one (at most ``max_delay_s``)."""

    max_restarts: int = 3
    window_s: float = 600.0
    first_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, recent_crashes: int) -> float:
        return float(min(self.first_delay_s * 2.0 ** max(0, recent_crashes - 1), self.max_delay_s))


class RunnerError(RuntimeError):
    """The model could not be started; the message says why in plain words."""


class _ExitedBeforeReady(Exception):
    def __init__(self, exit_: ChildExit) -> None:
        super().__init__(exit_.describe())
        self.exit = exit_


class _Child:
    """One running child process, its exit as a future on the loop."""

    def __init__(self, process: subprocess.Popen[bytes], endpoint: Endpoint, log_path: Path) -> None:
        self.process = process
        self.endpoint = endpoint
        self.log_path = log_path
        loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[int] = loop.create_future()

        def wait() -> None:
            code = process.wait()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
                loop.call_soon_threadsafe(_set_result, self.exited, code)

        threading.Thread(target=wait, name=f"model-runner-{process.pid}", daemon=True).start()

    def exit_info(self) -> ChildExit:
        return ChildExit(self.exited.result(), read_tail(self.log_path))

    async def stop(self, timeout_s: float) -> None:
        """Terminates the child, kills it if it has not exited within ``timeout_s``, and waits for its end."""
        if self.exited.done():
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.terminate()
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await asyncio.shield(self.exited)


def _set_result(future: asyncio.Future[int], code: int) -> None:
    if not future.done():
        future.set_result(code)


def _spawn(command: Sequence[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    """Starts the child, its output to ``log_path`` (a file never fills up like a pipe; the server logs every
    request). Called on the loop's thread: fork and exec take milliseconds, and asyncio's own subprocesses are not
    offered by every loop (qasync)."""
    new_private_dir(log_path.parent)
    with private_file(log_path).open("wb") as out:  # 0600: the server logs what the companions are asked
        return subprocess.Popen(list(command), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # Ctrl+C in a terminal is the app's to handle, not the model's


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ModelRunner:
    """Runs one model file in a child process and keeps it running.

    ``start()`` returns the endpoint once the model answers (within ``startup_timeout_s``); ``stop()`` ends the
    child and leaves no process holding the file. ``status`` is the current state; ``subscribe`` reports every
    change. ``options`` is the configuration in use, which may be safer than the one given after a fault
    (the caller may keep it for the next start of the app).
    """

    def __init__(self, options: RunnerOptions, *, log_dir: Path, policy: RestartPolicy | None = None,
                 startup_timeout_s: float = 120.0, stop_timeout_s: float = 10.0,
                 command: ChildCommand = child_command) -> None:
        self._options = options
        self._log_dir = log_dir
        self._policy = policy or RestartPolicy()
        self._startup_timeout_s = startup_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._command = command
        self._status = RunnerStatus(RunnerState.STOPPED, "not started", options)
        self._listeners: list[Callable[[RunnerStatus], None]] = []
        self._changed = asyncio.Event()
        self._child: _Child | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._crash_times: deque[float] = deque()
        self._restarts = 0
        self._starting: asyncio.Lock = asyncio.Lock()
        self._stopping = False
        # One address and key for the runner's life: after a restart the companions' clients find the model where
        # it was (their requests in between fail as with any server that restarts).
        self._port: int | None = None
        self._key = secrets.token_urlsafe(24)

    @property
    def status(self) -> RunnerStatus:
        return self._status

    @property
    def options(self) -> RunnerOptions:
        return self._options

    @property
    def log_path(self) -> Path:
        """The child's output (llama.cpp's load log, the server's errors) of the latest launch."""
        return self._log_dir / LOG_NAME

    @property
    def pid(self) -> int | None:
        """The running child's process id (None when none runs)."""
        child = self._child
        return child.process.pid if child is not None and not child.exited.done() else None

    def subscribe(self, listener: Callable[[RunnerStatus], None]) -> Callable[[], None]:
        """Calls ``listener`` with every new status (on the loop); returns the function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def wait_for(self, *states: RunnerState, timeout_s: float) -> RunnerStatus:
        """The status once it is in one of ``states`` (TimeoutError after ``timeout_s``)."""
        async with asyncio.timeout(timeout_s):
            while self._status.state not in states:
                self._changed.clear()
                await self._changed.wait()
        return self._status

    async def start(self) -> Endpoint:
        """Starts the model (if it is not running) and returns its endpoint once it answers.

        A fault while loading moves to a safer configuration and tries again; an error that no configuration
        answers (not a GGUF file, not enough memory, the time bound) raises :class:`RunnerError`."""
        async with self._starting:
            if self._status.state in (RunnerState.CRASHED, RunnerState.RESTARTING):  # the supervisor restarts it
                await self.wait_for(RunnerState.READY, RunnerState.FAILED, timeout_s=self._startup_timeout_s * 4)
            if self._child is not None and self._status.state is RunnerState.READY:
                return self._child.endpoint
            self._crash_times.clear()
            self._restarts = 0
            self._stopping = False
            self._set(RunnerState.STARTING, f"loading {self._options.model_file.name}")
            endpoint = await self._launch_until_ready()
            self._set(RunnerState.READY, f"{endpoint.model} answers", endpoint)
            return endpoint

    async def stop(self) -> None:
        """Stops the model: terminate, then kill after ``stop_timeout_s``; returns once the child has exited."""
        self._stopping = True
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None:
            supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await supervisor
        child, self._child = self._child, None
        if child is not None:
            await child.stop(self._stop_timeout_s)
        if self._status.state is not RunnerState.STOPPED:
            self._set(RunnerState.STOPPED, "stopped")

    async def _launch_until_ready(self) -> Endpoint:
        """Launches the child until it answers, each fault at load on a safer configuration."""
        while True:
            try:
                return await self._launch()
            except _ExitedBeforeReady as err:
                if self._stopping:
                    raise RunnerError("stopped before the model was ready") from None
                if "address already in use" in err.exit.log_tail.lower() and self._port is not None:
                    self._port = None  # another program took the port while the model was down: a new one
                    continue
                if err.exit.is_fault and (step := safer(self._options)) is not None:
                    self._options, change = step
                    self._set(RunnerState.RESTARTING, f"{err.exit.describe()} while loading; trying again with "
                                                      f"{change}")
                    continue
                self._set(RunnerState.FAILED, f"{err.exit.describe()} while loading")
                raise RunnerError(self._status.reason) from None
            except TimeoutError:
                self._set(RunnerState.FAILED, f"the model did not answer within {self._startup_timeout_s:.0f} s")
                raise RunnerError(self._status.reason) from None

    async def _launch(self) -> Endpoint:
        if self._child is not None:
            await self._child.stop(self._stop_timeout_s)
        port = self._port = self._port or _free_port()
        key = self._key
        config = ChildConfig.launch(self._options, port=port, api_key=key)
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", self._options.alias, key)
        process = _spawn(self._command(), self._child_env(config), self.log_path)
        child = self._child = _Child(process, endpoint, self.log_path)
        try:
            model = await self._until_answers(child)
        except BaseException:
            await child.stop(self._stop_timeout_s)
            raise
        child.endpoint = endpoint = Endpoint(endpoint.base_url, model, key)
        self._supervisor = asyncio.create_task(self._supervise(child), name="model-runner-supervisor")
        return endpoint

    def _child_env(self, config: ChildConfig) -> dict[str, str]:
        env = dict(os.environ)
        # The folder holding the `app` package, so that `-m app.llm.runner.child` imports from any working folder.
        source_root = str(Path(_app_package.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, env.get("PYTHONPATH")) if p)
        env.update({CONFIG_ENV: config.to_json(), "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"})
        return env

    async def _until_answers(self, child: _Child) -> str:
        """The model id once ``GET /v1/models`` answers; _ExitedBeforeReady if the child ends first."""
        headers = {"Authorization": f"Bearer {child.endpoint.api_key}"}
        async with asyncio.timeout(self._startup_timeout_s), httpx.AsyncClient(timeout=2.0, headers=headers) as http:
            while True:
                if child.exited.done():
                    raise _ExitedBeforeReady(child.exit_info())
                try:
                    answer = await http.get(f"{child.endpoint.base_url}/models")
                    if answer.status_code == 200:
                        return str(answer.json()["data"][0]["id"])
                except httpx.TransportError:
                    pass
                # A process loading its model offers nothing to wait on but its port (and its exit).
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(child.exited), 0.25)

    async def _supervise(self, child: _Child) -> None:
        """Waits for the child's end; a crash (any end not asked for) restarts it within the policy."""
        await asyncio.shield(child.exited)  # cancelling the supervisor (stop) must not cancel the exit's future
        crash = child.exit_info()
        self._child = None
        reason = crash.describe()
        self._set(RunnerState.CRASHED, reason)
        log.warning("model runner: %s (log: %s)", reason, self.log_path)
        now = time.monotonic()
        self._crash_times.append(now)
        while self._crash_times and now - self._crash_times[0] > self._policy.window_s:
            self._crash_times.popleft()
        if len(self._crash_times) > self._policy.max_restarts:
            minutes = self._policy.window_s / 60
            self._set(RunnerState.FAILED, f"{reason}; it crashed {len(self._crash_times)} times within "
                                          f"{minutes:.0f} minutes, so it is not started again")
            return
        change = ""
        if crash.is_fault and (step := safer(self._options)) is not None:
            self._options, answers = step
            change = f" with {answers}"
        await asyncio.sleep(self._policy.delay(len(self._crash_times)))
        self._restarts += 1
        self._set(RunnerState.RESTARTING, f"{reason}; starting it again{change}")
        try:
            endpoint = await self._launch_until_ready()
        except RunnerError:
            return  # _launch_until_ready said why (FAILED)
        self._set(RunnerState.READY, f"restarted after: {reason}", endpoint)

    def _set(self, state: RunnerState, reason: str, endpoint: Endpoint | None = None) -> None:
        self._status = RunnerStatus(state, reason, self._options, endpoint, self._restarts)
        log.info("model runner %s: %s", state, reason)
        self._changed.set()
        for listener in list(self._listeners):
            try:
                listener(self._status)
            except Exception:
                log.exception("a model runner listener failed")
