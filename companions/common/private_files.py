"""Files and folders readable by the user only: folders 0700, files 0600.

Conversations, memory, cards, the search index and speech say a lot about a person. The core creates its files
with these modes too (the search index, imported cards), so whichever command creates them, they are private;
app/storage/private_files.py adds the tightening of files an older Madoi left readable by others. On Windows the
modes mean little (the profile's ACLs protect it), so failures to set them are ignored there and logged elsewhere.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

PRIVATE_DIR: Final = 0o700
PRIVATE_FILE: Final = 0o600


def make_private(path: Path, mode: int) -> None:
    """Sets ``path``'s mode to ``mode`` unless it has it already (a missing path is left alone)."""
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
    make_private(path, PRIVATE_DIR)
    return path


def new_private_dir(path: Path) -> Path:
    """Creates ``path`` 0700 if it is missing; an existing folder keeps its mode (it may be one the user chose
    and shares, such as a speech output folder)."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    return path


def private_file(path: Path) -> Path:
    """Creates ``path`` empty if it does not exist; either way it ends up 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
    os.close(fd)
    make_private(path, PRIVATE_FILE)
    return path


def private_sqlite(path: Path) -> Path:
    """Makes the SQLite database ``path`` (created empty if missing) and its -wal, -shm and -journal files 0600.

    SQLite gives the files it creates beside a database the database file's mode, so a database created 0600
    before SQLite opens it keeps its -wal and -shm private; those left by an older Madoi are tightened here.
    """
    new_private_dir(path.parent)
    private_file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        make_private(path.with_name(path.name + suffix), PRIVATE_FILE)
    return path
