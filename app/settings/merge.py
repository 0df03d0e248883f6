"""A write of the settings file changes only what the writer changed: what others wrote meanwhile stays.

Several programs write ``settings.toml``: the window (Save, the camera switch, an answer to a consent prompt, an
allowed web page, the companion editor) and the command line (``madoi companions approve ID`` while the window is
open). Each holds the settings it read at some moment; writing them out whole made the last writer undo every
change made since its read (an approval given on the command line was gone at the window's next Save).

So a writer keeps the settings it read (:class:`ReadSettings`: the file's data as that program's settings object
stood when read or last written) and a write is a three-way merge, done under a lock file beside the settings
(``settings.toml.lock``, `filelock`: a lock the OS drops when the holder dies, on Linux, macOS and Windows):

1. read the file as it is now;
2. the changes of this writer: every key whose value differs between what it read and what it writes (a key it
   dropped is removed);
3. apply them to the file as it is now, and write it atomically (companions/common/atomic_write.py).

A list (trust decisions, approved cards, allowed origins, knowledge folders, MCP servers) is merged by its items:
the items this writer added are added, the ones it removed are removed, and items another program added stay. A key
nobody changed keeps whatever the file says, so a key this version of Madoi does not know stays too.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from filelock import FileLock

from companions.common.atomic_write import PRIVATE_FILE, write_atomically

LOCK_TIMEOUT_S: Final = 10.0  # another writer holds the file for milliseconds; a stuck one is an OSError
_MISSING: Final = object()


@dataclass(frozen=True)
class _Change:
    path: tuple[str, ...]
    value: Any = _MISSING  # _MISSING: the key was removed
    added: tuple[Any, ...] = ()  # for a list: the items added and removed
    removed: tuple[Any, ...] = ()
    is_list: bool = False


def lock_for(settings_file: Path) -> FileLock:
    """The lock every writer of ``settings_file`` holds while it reads and writes it."""
    return FileLock(settings_file.with_name(settings_file.name + ".lock"), timeout=LOCK_TIMEOUT_S, mode=PRIVATE_FILE)


def read_file(settings_file: Path) -> dict[str, Any] | None:
    """The file's data; ``{}`` when there is no file, None when it cannot be read as TOML (it is then replaced)."""
    try:
        return tomllib.loads(settings_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


def changes(read: Mapping[str, Any], written: Mapping[str, Any],
            path: tuple[str, ...] = ()) -> Iterator[_Change]:
    """What a writer changed: every key whose value differs between ``read`` and ``written``."""
    for key in read.keys() | written.keys():
        here = (*path, key)
        before, after = read.get(key, _MISSING), written.get(key, _MISSING)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            yield from changes(before, after, here)
        elif isinstance(before, list) and isinstance(after, list):
            if before != after:
                kept, now = {_key(i) for i in before}, {_key(i) for i in after}
                yield _Change(here, after, added=tuple(i for i in after if _key(i) not in kept),
                              removed=tuple(i for i in before if _key(i) not in now), is_list=True)
        elif before != after:
            yield _Change(here, after)


def apply(on_file: dict[str, Any], read: Mapping[str, Any], writes: Iterable[_Change]) -> dict[str, Any]:
    """``on_file`` with ``writes`` applied (a copy); a list's changes apply to the list the file has now (or, when
    the file has none, to the one the writer read: the default it stood for)."""
    data = copy.deepcopy(on_file)
    for change in writes:
        *parents, last = change.path
        table = data
        for name in parents:
            inner = table.get(name)
            if not isinstance(inner, dict):
                inner = table[name] = {}
            table = inner
        if change.value is _MISSING:
            table.pop(last, None)
        elif change.is_list:
            current = table.get(last, _MISSING)
            if not isinstance(current, list):
                current = _at(read, change.path)
                current = list(current) if isinstance(current, list) else []
            gone = {_key(i) for i in change.removed}
            merged = [i for i in current if _key(i) not in gone]
            present = {_key(i) for i in merged}
            merged += [i for i in change.added if _key(i) not in present]
            table[last] = merged
        else:
            table[last] = copy.deepcopy(change.value)
    return _without_empty_tables(data)


def _at(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = data
    for name in path:
        if not isinstance(value, Mapping):
            return _MISSING
        value = value.get(name, _MISSING)
    return value


def _without_empty_tables(data: dict[str, Any]) -> dict[str, Any]:
    """A ``[companions.<id>]`` whose last choice was removed goes with it (TOML keeps no empty tables worth having)."""
    companions = data.get("companions")
    if isinstance(companions, dict):
        for companion_id in [i for i, c in companions.items() if c == {}]:
            del companions[companion_id]
        if not companions:
            del data["companions"]
    return data


def merged_write(settings_file: Path, read: Mapping[str, Any] | None, written: dict[str, Any],
                 keep: Mapping[str, Any], dump: Any) -> None:
    """Writes ``written`` into ``settings_file`` under its lock, as a change from ``read`` (None: what this writer
    read is not known, so ``written`` replaces the file, as does a file that cannot be read); the keys of ``keep``
    (``{section: {field: ...}}``: set by ``MADOI_*`` variables for this run) are never written. ``dump`` turns the
    data into TOML text."""
    with lock_for(settings_file):
        on_file = read_file(settings_file)
        if read is None or on_file is None:
            base: Mapping[str, Any] = on_file or {}
            data = copy.deepcopy(written)
            for section, fields in keep.items():  # the file keeps what it had for them (or nothing)
                for name in fields:
                    kept = _at(base, (section, name))
                    if kept is not _MISSING:
                        data.setdefault(section, {})[name] = kept
                    elif isinstance(data.get(section), dict):
                        data[section].pop(name, None)
        else:
            own = [c for c in changes(read, written) if not (len(c.path) >= 2 and c.path[1] in keep.get(c.path[0], {}))]
            data = apply(on_file, read, own)
        write_atomically(settings_file, dump(data))  # 0600: the file names the user's servers and folders
