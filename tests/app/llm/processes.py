"""Looking at processes from a test (Linux /proc): running, ended, holding a file."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.waiting import wait_until


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def gone(pid: int, timeout_s: float = 10.0) -> bool:
    """Whether ``pid`` ends within ``timeout_s`` (a process's end offers nothing to wait on but polling)."""
    with contextlib.suppress(TimeoutError):
        await wait_until(lambda: not alive(pid), timeout=timeout_s, every=0.05)
    return not alive(pid)


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = parent_of(pid)
    return False


def holders_of(path: Path, *, descendants_of: int | None = None) -> list[int]:
    """The processes that have ``path`` open or mapped (llama.cpp maps the model file), only the descendants of
    ``descendants_of`` if given (other programs, another test run's server, may use the same file)."""
    target = str(path.resolve())
    holders = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        if descendants_of is not None and not descends_from(int(proc.name), descendants_of):
            continue
        with contextlib.suppress(OSError):
            mapped = target in (proc / "maps").read_text()
            opened = any(str(fd.readlink()) == target for fd in (proc / "fd").iterdir())
            if mapped or opened:
                holders.append(int(proc.name))
    return holders
