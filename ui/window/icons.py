"""The app icon: drawn as SVG (``resources/icons/madoi.svg``), rendered by QtSvg at whatever size is asked."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from resources import RESOURCES_DIR

ICON_SVG: Final = RESOURCES_DIR / "icons" / "madoi.svg"
ICON_SIZES: Final = (16, 24, 32, 48, 64, 128, 256)


def render_icon(size: int) -> QImage:
    """The icon as a ``size`` x ``size`` image with a transparent background."""
    renderer = QSvgRenderer(str(ICON_SVG))
    if not renderer.isValid():
        raise ValueError(f"{ICON_SVG} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def app_icon() -> QIcon:
    """Every standard size pre-rendered, so small sizes stay crisp on every platform's icon code path."""
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addPixmap(QPixmap.fromImage(render_icon(size)))
    return icon


def write_png(size: int, path: Path) -> Path:
    if not render_icon(size).save(str(path)):
        raise OSError(f"could not write {path}")
    return path
