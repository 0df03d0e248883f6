"""The user's files are readable by the user only: the config and data directories 0700, the files in them 0600.

Conversations, the companions' memory, the settings, the log and the fallback secrets file say a lot about a
person. New files are created with these modes (:func:`private_file`, :func:`private_dir`, which live in the core:
companions/common/private_files.py, whose files are created private too); files made by an older Madoi (created
world-readable) are tightened at every start (:func:`tighten`). On Windows the modes mean little (the profile's
ACLs protect it), so failures to set them are ignored there and logged elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from companions.common.private_files import PRIVATE_DIR, PRIVATE_FILE, make_private, private_dir, private_file

__all__ = ["PRIVATE_DIR", "PRIVATE_FILE", "private_dir", "private_file", "tighten"]

# What Madoi keeps in its directories: these names and their SQLite (-wal, -shm, -journal) and rotated log
# (.1, .2 ...) companions. A MADOI_HOME may be a folder that holds other things too: those are left alone.
KNOWN_FILES: Final = ("madoi.sqlite3", "search.sqlite3", "madoi.log", "settings.toml", "secrets.json", "window.ini",
                      "model-servers.json")
# Folders in them that only Madoi writes (the user's cards, the model's logs, downloaded models): every file
# directly in them is Madoi's.
KNOWN_FOLDERS: Final = ("companions", "logs", "models", "speech-models")


def _ours(name: str) -> bool:
    return any(name == known or name.startswith(known + "-") or name.startswith(known + ".")
               for known in KNOWN_FILES)


def _tighten_folder(folder: Path, ours: Callable[[str], bool]) -> None:
    make_private(folder, PRIVATE_DIR)
    for entry in folder.iterdir():
        if ours(entry.name) and entry.is_file() and not entry.is_symlink():
            make_private(entry, PRIVATE_FILE)


def tighten(folders: Iterable[Path]) -> None:
    """Makes each existing folder 0700 and Madoi's files directly in it 0600, and so its own folders and their
    files (files from before this rule, or copied in by the user)."""
    for folder in dict.fromkeys(folders):
        if not folder.is_dir():
            continue
        _tighten_folder(folder, _ours)
        for name in KNOWN_FOLDERS:
            inner = folder / name
            if inner.is_dir() and not inner.is_symlink():
                _tighten_folder(inner, lambda _name: True)
