"""The user's files are readable by the user only: the config and data directories 0700, the files in them 0600.

Conversations, the companions' memory, the settings, the log and the fallback secrets file say a lot about a
person. New files are created with these modes (:func:`private_file`, :func:`private_dir`); files made by an
older Madoi (created world-readable) are tightened at every start (:func:`tighten`). On Windows the modes mean
little (the profile's ACLs protect it), so failures to set them are ignored there and logged elsewhere.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

PRIVATE_DIR: Final = 0o700
PRIVATE_FILE: Final = 0o600
# What Madoi keeps in its directories: these names and their SQLite (-wal, -shm, -journal) and rotated log
# (.1, .2 ...) companions. A MADOI_HOME may be a folder that holds other things too: those are left alone.
KNOWN_FILES: Final = ("madoi.sqlite3", "search.sqlite3", "madoi.log", "settings.toml", "secrets.json")


def _chmod(path: Path, mode: int) -> None:
    try:
        if stat.S_IMODE(path.stat().st_mode) != mode:
            os.chmod(path, mode)
    except FileNotFoundError:
        pass
    except OSError as err:
        if os.name != "nt":
            log.warning("could not make %s private (%s)", path, err)


def private_dir(path: Path) -> Path:
    """Creates ``path`` (and its parents) if needed; ``path`` itself ends up 0700."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    _chmod(path, PRIVATE_DIR)
    return path


def private_file(path: Path) -> Path:
    """Creates ``path`` empty if it does not exist; either way it ends up 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
    os.close(fd)
    _chmod(path, PRIVATE_FILE)
    return path


def _ours(name: str) -> bool:
    return any(name == known or name.startswith(known + "-") or name.startswith(known + ".")
               for known in KNOWN_FILES)


def tighten(folders: Iterable[Path]) -> None:
    """Makes each existing folder 0700 and Madoi's files directly in it 0600 (files from before this rule)."""
    for folder in dict.fromkeys(folders):
        if not folder.is_dir():
            continue
        _chmod(folder, PRIVATE_DIR)
        for entry in folder.iterdir():
            if _ours(entry.name) and entry.is_file() and not entry.is_symlink():
                _chmod(entry, PRIVATE_FILE)
