"""One colour per companion, the same in every panel and every run: its card's, else the palette's (derived from
the id, not from the order, and kept apart from the colours of the other companions present).

The colours are mid-lightness and saturated, so they read as text and as a tint on the light and the dark theme
alike; the theme's amber accent is left out so a companion never looks like a button.
"""

from __future__ import annotations

import hashlib
import math
from typing import Final

from PySide6.QtGui import QColor

from ui.roster.faces import FACES

PALETTE: Final[tuple[str, ...]] = (  # hues far apart (CIE76 distance 27 at the least): no two purples
    "#2a9d8f",  # teal
    "#d1495b",  # rose
    "#3a7bd5",  # blue
    "#8e5bd0",  # violet
    "#4f9a2e",  # green
    "#c0508f",  # magenta
    "#9c7a18",  # ochre
    "#c2562f",  # brick
)
USER_COLOR: Final = "#6b7a8f"  # slate: the user's own messages
APART: Final = 40.0  # the CIE76 distance a palette colour keeps from the colours of the other companions present


def companion_color(companion_id: str) -> QColor:
    """The colour of ``companion_id``: the one its card names (ui/roster/faces.py), else one of :data:`PALETTE`
    picked by a hash of the id, moved on to the next one far enough (:data:`APART`) from the colours of the other
    companions present (those ranked before it by id): the same in every panel and every run for the same cast."""
    own = FACES.colour(companion_id)
    if own is not None:
        return own
    present = FACES.companions()
    taken = [c for c in (FACES.colour(other) for other in present if other != companion_id) if c is not None]
    for other in sorted(present):
        if other == companion_id:
            break
        if FACES.colour(other) is None:
            taken.append(QColor(_free(other, taken)))
    return QColor(_free(companion_id, taken))


def _free(companion_id: str, taken: list[QColor]) -> str:
    digest = hashlib.sha256(companion_id.encode("utf-8")).digest()
    start = int.from_bytes(digest[:4], "big") % len(PALETTE)
    for step in range(len(PALETTE)):
        colour = PALETTE[(start + step) % len(PALETTE)]
        if all(colour_distance(QColor(colour), other) >= APART for other in taken):
            return colour
    return PALETTE[start]  # more companions than far-apart colours: the id's own


def colour_distance(a: QColor, b: QColor) -> float:
    """The CIE76 distance of two colours (CIELAB, D65): about 2.3 is just noticeable, above 30 clearly other."""
    return math.dist(_lab(a), _lab(b))


def _lab(colour: QColor) -> tuple[float, float, float]:
    def linear(c: float) -> float:
        return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92

    r, g, b = linear(colour.redF()), linear(colour.greenF()), linear(colour.blueF())
    x = (r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047
    y = r * 0.2126 + g * 0.7152 + b * 0.0722
    z = (r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def user_color() -> QColor:
    """The colour of the user's own messages."""
    return QColor(USER_COLOR)
