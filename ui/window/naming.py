"""Object names make widgets findable by tests, style sheets and accessibility tools."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QObject

W = TypeVar("W", bound=QObject)


def named(obj: W, name: str) -> W:
    """Sets ``obj``'s objectName and returns it."""
    obj.setObjectName(name)
    return obj
