"""One colour per companion, the same in every panel and every run (derived from the id, not from the order).

The colours are mid-lightness and saturated, so they read as text and as a tint on the light and the dark theme
alike; the theme's amber accent is left out so a companion never looks like a button.
"""

from __future__ import annotations

import hashlib
from typing import Final

from PySide6.QtGui import QColor

from ui.roster.faces import FACES

PALETTE: Final[tuple[str, ...]] = (
    "#2a9d8f",  # teal
    "#d1495b",  # rose
    "#3a7bd5",  # blue
    "#8e5bd0",  # violet
    "#4f9a2e",  # green
    "#c0508f",  # magenta
    "#1b98b8",  # cyan
    "#9c7a18",  # ochre
    "#5a62c8",  # indigo
    "#c2562f",  # brick
    "#3f8f6b",  # jade
    "#a04fb5",  # plum
)
USER_COLOR: Final = "#6b7a8f"  # slate: the user's own messages


def companion_color(companion_id: str) -> QColor:
    """The stable colour of ``companion_id`` (a hash of the id picks one of :data:`PALETTE`; the sample
    companions akari, hina and souta get three different ones)."""
    own = FACES.colour(companion_id)  # a colour the user chose in the companion editor
    if own is not None:
        return own
    digest = hashlib.sha256(companion_id.encode("utf-8")).digest()
    return QColor(PALETTE[int.from_bytes(digest[:4], "big") % len(PALETTE)])


def user_color() -> QColor:
    """The colour of the user's own messages."""
    return QColor(USER_COLOR)
