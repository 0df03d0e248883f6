"""pytest plugin: proves the core works with no GUI, device or network-server library importable.

Used as ``pytest -p tests.block_gui tests/companions``. Any import of a blocked package fails loudly, and the
session fails if one got into ``sys.modules`` anyway.
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

BLOCKED = ("PySide6", "shiboken6", "qasync", "cv2", "pyttsx3", "websockets")


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname.split(".", maxsplit=1)[0] in BLOCKED:
            raise ImportError(f"{fullname} is blocked: the core (companions/) must not need it")


def pytest_configure(config: Any) -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED:
            raise RuntimeError(f"{name} was imported before the blocker was installed")
    sys.meta_path.insert(0, _Blocker())


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    leaked = sorted({n.split(".")[0] for n in sys.modules if n.split(".")[0] in BLOCKED})
    if leaked:
        print(f"\nblocked packages were imported: {leaked}")
        session.exitstatus = 1
