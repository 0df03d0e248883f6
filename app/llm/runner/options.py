"""How the model runner's child process runs its model, and the safer configurations tried after a crash.

:class:`RunnerOptions` is what the caller chooses (the model file, the context size, the threads);
:class:`ChildConfig` is what one launch of the child receives (the options plus the port, the key and the parent's
process id), through one environment variable so that the key never shows on a command line (``ps``).

A llama.cpp crash by a fatal signal (SIGILL, SIGSEGV, SIGBUS, SIGFPE) is almost never chance: it is this CPU, this
file or this machine's memory answering the configuration the same way every time. So each such crash moves the
runner one step down :data:`SAFER_STEPS`, each step switching off one thing known to crash on some machines.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

CHILD_FLAG: Final = "--model-runner-child"
"""``madoi --model-runner-child``: the program runs the runner's child (app.main; a frozen bundle has no ``-m``)."""

CONFIG_ENV: Final = "MADOI_MODEL_RUNNER_CONFIG"
"""The environment variable that carries a launch's :class:`ChildConfig` (JSON) to the child."""

DEFAULT_CONTEXT: Final = 8192
"""Tokens of context: a companion's system prompt, its memories and the recent conversation fit with room for the
reply (the tests' real server runs with the same). Qwen2.5-1.5B's cache at 8192 tokens is ~230 MB."""

MAX_THREADS: Final = 8
"""Generation is bound by memory bandwidth: beyond ~8 threads a small model gets no faster, the desktop slower."""


def default_threads(cpus: int | None = None) -> int:
    """Threads for generation: every CPU this process may run on up to 4 (a 2-core machine uses both: one thread
    would halve the speed of every reply), one left for the window beyond that, at most :data:`MAX_THREADS`."""
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    usable = cpus if cpus <= 4 else cpus - 1
    return max(1, min(usable, MAX_THREADS))


@dataclass(frozen=True)
class RunnerOptions:
    """One way of running a model file; :func:`safer` derives the fallbacks from it."""

    model_file: Path
    context: int = DEFAULT_CONTEXT
    threads: int = dataclasses.field(default_factory=default_threads)
    batch: int = 512
    # llama.cpp's "extra buffer types": at load, the CPU backend repacks the weights into layouts for the widest
    # instructions the CPU advertises (AVX-512, AMX). Off = plain layouts (llama-server's --no-repack).
    extra_buffers: bool = True
    # The weights mapped from the file (shared with the page cache, fast to load) rather than read into memory.
    mmap: bool = True
    model_alias: str | None = None
    """The model's id in ``/v1/models`` (what companions send as ``model``); by default the file's stem."""

    @property
    def alias(self) -> str:
        return self.model_alias or self.model_file.stem


@dataclass(frozen=True)
class SaferStep:
    """One fallback: what it changes, and the crash it answers (said in the runner's state)."""

    answers: str
    apply: Callable[[RunnerOptions], RunnerOptions]

    def applies_to(self, options: RunnerOptions) -> bool:
        return self.apply(options) != options


SAFER_STEPS: Final[tuple[SaferStep, ...]] = (
    SaferStep(
        # A CPU in a virtual machine may advertise AMX or AVX-512 that the hypervisor does not really give: the
        # repacked weights then die with SIGILL or a general protection fault in libggml-cpu at load or at the
        # first completion. Plain layouts use only the instructions the build was made for.
        answers="weights no longer repacked for this CPU's widest instructions",
        apply=lambda o: dataclasses.replace(o, extra_buffers=False),
    ),
    SaferStep(
        # A mapped file that changes or shrinks under the process (a model manager updating its blob, a removable
        # or network drive) kills it with SIGBUS at the first touch of the missing page. Read into memory, the
        # weights no longer depend on the file after the load.
        answers="weights read into memory instead of mapped from the file",
        apply=lambda o: dataclasses.replace(o, mmap=False),
    ),
    SaferStep(
        # The last resort: one thread and small batches, for crashes in the multi-threaded kernels and the
        # stack-hungry large batches of some builds. Slow, but the companions can talk.
        answers="one thread and small batches",
        apply=lambda o: dataclasses.replace(o, threads=1, batch=min(o.batch, 64)),
    ),
)


def safer(options: RunnerOptions) -> tuple[RunnerOptions, str] | None:
    """The next safer configuration than ``options`` and what it changes, or None when none is left."""
    for step in SAFER_STEPS:
        if step.applies_to(options):
            return step.apply(options), step.answers
    return None


@dataclass(frozen=True)
class ChildConfig:
    """What one launch of the child needs: the options, where to listen, the key, and whom to die with."""

    model_file: str
    alias: str
    port: int
    api_key: str
    parent_pid: int
    context: int
    threads: int
    batch: int
    extra_buffers: bool
    mmap: bool
    host: str = "127.0.0.1"

    @classmethod
    def launch(cls, options: RunnerOptions, *, port: int, api_key: str) -> ChildConfig:
        return cls(model_file=str(options.model_file), alias=options.alias, port=port, api_key=api_key,
                   parent_pid=os.getpid(), context=options.context, threads=options.threads, batch=options.batch,
                   extra_buffers=options.extra_buffers, mmap=options.mmap)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ChildConfig:
        return cls(**json.loads(text))
