"""A chat bubble as the transcript draws it (its header line) and as tests read it back (its snapshot)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from PySide6.QtGui import QColor

HIGHLIGHT_BORDER: Final = 3  # a bubble's border while its message is spoken aloud


@dataclass(frozen=True)
class Header:
    """The first line of a bubble: who, with what feeling, to whom, when (or what is going on), and a quiet note
    about the message itself ("edited"; "stand-in line: …" when a stock filler stood in for the companion's own)."""

    name: str
    color: QColor
    emotion: str = ""
    recipients: str = ""
    time: str = ""
    status: str = ""
    note: str = ""
    avatar: str = ""  # the companion whose face comes first (ui/roster/avatars.py); empty for the user and notes


@dataclass(frozen=True)
class BubbleSnapshot:
    """What a bubble looks like, read back from the document (for tests and accessibility checks)."""

    key: str
    header: str
    text: str
    name_color: str  # "#rrggbb" of the sender's name
    background: QColor
    border: float
    provisional: bool

    @property
    def highlighted(self) -> bool:
        return self.border >= HIGHLIGHT_BORDER
