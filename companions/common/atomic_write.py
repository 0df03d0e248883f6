"""Writing a file whole or not at all: a crash (or a full disk) mid-write leaves the old file as it was.

The bytes go to a temporary file in the same directory (created readable by the owner only), are flushed and
fsynced, then renamed over the target, and the directory is fsynced so the rename itself survives a power cut.
A temporary file left by a crash is never read (its name is not the target's) and is removed by the next write.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Final

from companions.common.private_files import PRIVATE_FILE, new_private_dir

__all__ = ["PRIVATE_FILE", "write_atomically"]

_TEMP_SUFFIX: Final = ".partial"


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def write_atomically(path: Path, data: bytes | str, *, mode: int = PRIVATE_FILE) -> None:
    """Replaces ``path`` with ``data`` (text is written as UTF-8) in one rename; the file gets ``mode``.

    Raises:
        OSError: the directory cannot be written (the old file, if any, is untouched).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = path.parent
    new_private_dir(folder)
    _remove_leftovers(path)
    fd, temp_name = tempfile.mkstemp(dir=folder, prefix=_temp_prefix(path), suffix=_TEMP_SUFFIX)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            if hasattr(os, "fchmod"):  # (Windows has none; its profile's ACLs keep the file the user's)
                os.fchmod(out.fileno(), mode)
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_dir(folder)


def _remove_leftovers(path: Path) -> None:
    """Temporary files of earlier writes to ``path`` that a crash left behind."""
    for leftover in path.parent.glob(f"{_temp_prefix(path)}*{_TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            leftover.unlink()


def _fsync_dir(folder: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):  # Windows: directories cannot be opened; NTFS journals the rename
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
