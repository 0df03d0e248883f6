"""What a child's exit means, in plain words, and whether a safer configuration answers it."""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Final

FATAL_SIGNALS: Final = frozenset({"SIGILL", "SIGSEGV", "SIGBUS", "SIGFPE"})
"""Signals by which llama.cpp dies when the CPU, the file or the memory disagrees with its configuration (by name:
Windows has no SIGBUS)."""

# Windows reports the same faults as NTSTATUS exit codes: access violation, illegal instruction, in-page error.
_FATAL_WINDOWS_CODES: Final = frozenset({0xC0000005, 0xC000001D, 0xC0000006})
# What a fault leaves in the child's own output (a shell wrapper, faulthandler, the kernel's wording copied in).
FAULT_WORDS: Final = ("general protection fault", "segmentation fault", "illegal instruction", "bus error",
                      "fatal python error: segmentation fault", "fatal python error: illegal instruction")

_ERROR_WORDS: Final = re.compile(r"\b(error|exception|failed|fault)\b", re.IGNORECASE)  # not "default"
_PLAIN_SIGNALS: Final = {
    "SIGILL": "an instruction this CPU does not run (SIGILL)",
    "SIGSEGV": "a memory access fault (SIGSEGV)",
    "SIGBUS": "a fault reading the model file (SIGBUS)",
    "SIGFPE": "an arithmetic fault (SIGFPE)",
    "SIGKILL": "being killed (SIGKILL: out of memory, or another program)",
    "SIGTERM": "being asked to stop (SIGTERM) by another program",
}


@dataclass(frozen=True)
class ChildExit:
    """How a child ended: its return code (negative: the signal that killed it, POSIX) and its last words."""

    returncode: int
    log_tail: str = ""

    @property
    def signal(self) -> signal.Signals | None:
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode)
        except ValueError:
            return None

    @property
    def is_fault(self) -> bool:
        """A crash by a fault (fatal signal, its Windows code, or its words in the log): the configuration's doing,
        which a safer one may avoid. Not a kill from outside (SIGKILL, OOM) nor an error exit."""
        by_signal = self.signal is not None and self.signal.name in FATAL_SIGNALS
        if by_signal or (self.returncode & 0xFFFFFFFF) in _FATAL_WINDOWS_CODES:
            return True
        tail = self.log_tail.lower()
        return self.returncode != 0 and any(words in tail for words in FAULT_WORDS)

    def describe(self) -> str:
        """The exit in plain words, with the log's last line when it says more."""
        if (sig := self.signal) is not None:
            text = f"the model stopped after {_PLAIN_SIGNALS.get(sig.name, f'signal {sig.name}')}"
        elif self.returncode == 0:
            text = "the model stopped by itself"
        else:
            text = f"the model stopped with exit code {self.returncode}"
        last = last_meaningful_line(self.log_tail)
        return f"{text}: {last}" if last else text


def last_meaningful_line(log_tail: str) -> str:
    """The last line that reads like an error (a Python exception's last line, llama.cpp's error), else ''."""
    lines = [line.strip() for line in log_tail.splitlines() if line.strip()]
    for line in reversed(lines):
        if _ERROR_WORDS.search(line):
            return line[:300]
    return ""


def read_tail(path: Path, limit: int = 8192) -> str:
    """The last ``limit`` bytes of a log file, '' when there is none."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode(errors="replace")
    except OSError:
        return ""
