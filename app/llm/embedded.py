"""The model file Madoi runs itself (``llm.model_file``): one :class:`~app.llm.runner.ModelRunner` for the app's life.

:class:`EmbeddedModel` starts the runner on the chosen file when the companions' default model is resolved, keeps
it while the file stays the same (a restart after a crash is the runner's own), replaces it when the user chooses
another file, and stops it with the app, so that no process is left holding the file. Whoever shows its state (the
window's status bar) subscribes once: the subscription outlives the runners.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Final

from app.llm.model_files import NotAModelFile, chosen_model_file
from app.llm.runner import Endpoint, ModelRunner, RunnerError, RunnerOptions, RunnerStatus
from app.llm.runner.runner import ChildCommand, child_command

log = logging.getLogger(__name__)

STOP_TIMEOUT_S: Final = 0.5
"""How long the model has to end after SIGTERM before it is killed: it has nothing to save, and the app's stop must
not wait on a reply being generated."""

StatusListener = Callable[[RunnerStatus], None]


class ModelFileProblem(RuntimeError):
    """The model file cannot be run; the message says why in plain words."""


class EmbeddedModel:
    """The runner of the model file of the moment (None before the first :meth:`run` and after :meth:`stop`)."""

    def __init__(self, log_dir: Path, *, command: ChildCommand = child_command, startup_timeout_s: float = 300.0,
                 stop_timeout_s: float = STOP_TIMEOUT_S) -> None:
        self._log_dir = log_dir
        self._command = command
        self._startup_timeout_s = startup_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._runner: ModelRunner | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._listeners: list[StatusListener] = []

    @property
    def runner(self) -> ModelRunner | None:
        return self._runner

    @property
    def status(self) -> RunnerStatus | None:
        """The runner's state, or None when no model file is run."""
        return self._runner.status if self._runner is not None else None

    def subscribe(self, listener: StatusListener) -> Callable[[], None]:
        """Calls ``listener`` with every state of every runner from now on; returns what unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def run(self, path: Path) -> Endpoint:
        """The endpoint of the model in ``path`` once it answers (the runner started, or the one running on it).

        Raises:
            ModelFileProblem: the file is missing or no GGUF model, or the model could not be started.
        """
        try:
            await asyncio.to_thread(chosen_model_file, path)
        except NotAModelFile as err:
            await self.stop()
            raise ModelFileProblem(str(err)) from None
        runner = self._runner
        if runner is None or runner.options.model_file != path:
            await self.stop()
            runner = self._runner = ModelRunner(RunnerOptions(path), log_dir=self._log_dir, command=self._command,
                                                startup_timeout_s=self._startup_timeout_s,
                                                stop_timeout_s=self._stop_timeout_s)
            self._unsubscribe = runner.subscribe(self._tell)
        try:
            return await runner.start()
        except RunnerError as err:
            raise ModelFileProblem(f"{path.name} could not be started: {err}") from None

    async def stop(self) -> None:
        """Stops the model (if one runs) and returns once its process has ended."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        try:
            await runner.stop()
        finally:
            if self._unsubscribe is not None:
                self._unsubscribe()
                self._unsubscribe = None

    def _tell(self, status: RunnerStatus) -> None:
        for listener in list(self._listeners):
            try:
                listener(status)
            except Exception:
                log.exception("a model status listener failed")
