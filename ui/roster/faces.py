"""Each companion's face as the window shows it: its picture (a card's ``avatar``) and its own colour, for every
panel at once (the roster, the chat, the Turns panel and the editor paint avatars through ui/roster/avatars.py).

One registry for the window (:data:`FACES`), filled from the running cast when the window attaches and again
whenever the cast changes (a companion edited, imported or removed: ``CastChanged``); panels that cache painted
avatars compare :attr:`CompanionFaces.revision`. A picture is read once, scaled down once (a 20 MB card picture
becomes a small pixmap) and kept; one that cannot be read is its letter circle, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QImage, QImageReader

PICTURE_SIDE = 256  # pixels kept per picture: enough for the editor's preview and every avatar size


@dataclass(frozen=True)
class Face:
    """A companion's picture file (None: its letter circle) and its own colour (None: the palette's)."""

    picture: Path | None = None
    colour: str | None = None


class CompanionFaces:
    def __init__(self) -> None:
        self._faces: dict[str, Face] = {}
        self._images: dict[Path, QImage | None] = {}
        self.revision = 0

    def update(self, faces: dict[str, Face]) -> bool:
        """The faces now; True (and a new revision) when any changed."""
        if faces == self._faces:
            return False
        self._faces = dict(faces)
        self._images.clear()  # a picture may have been replaced in place (the editor writes <id>.png again)
        self.revision += 1
        return True

    def companions(self) -> list[str]:
        """The ids of the cast (every companion with a card)."""
        return list(self._faces)

    def colour(self, companion_id: str) -> QColor | None:
        face = self._faces.get(companion_id)
        return QColor(face.colour) if face is not None and face.colour else None

    def image(self, companion_id: str) -> QImage | None:
        """The companion's picture, square-cropped and at most :data:`PICTURE_SIDE` wide; None without one."""
        face = self._faces.get(companion_id)
        if face is None or face.picture is None:
            return None
        if face.picture not in self._images:
            self._images[face.picture] = _load(face.picture)
        return self._images[face.picture]


def _load(path: Path) -> QImage | None:
    reader = QImageReader(str(path))
    size = reader.size()
    if size.isValid() and max(size.width(), size.height()) > PICTURE_SIDE * 2:
        reader.setScaledSize(size.scaled(QSize(PICTURE_SIDE * 2, PICTURE_SIDE * 2),
                                         Qt.AspectRatioMode.KeepAspectRatioByExpanding))  # decoded small
    image = reader.read()
    if image.isNull():
        return None
    side = min(image.width(), image.height())
    square = image.copy((image.width() - side) // 2, (image.height() - side) // 2, side, side)
    return square.scaled(PICTURE_SIDE, PICTURE_SIDE, Qt.AspectRatioMode.IgnoreAspectRatio,
                         Qt.TransformationMode.SmoothTransformation)


FACES = CompanionFaces()
