"""A companion's avatar: its picture in a circle (ui/roster/faces.py), else its initials on a circle of its colour
(see ui/roster/colors.py)."""

from __future__ import annotations

import unicodedata
from typing import Final

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPainterPath, QPixmap

from ui.roster.colors import companion_color
from ui.roster.faces import FACES

CJK_BOLD_FROM: Final = 14  # pixel size from which a bold kanji keeps its strokes apart


def is_wide(text: str) -> bool:
    """Whether ``text`` holds a wide (East Asian) character: kana, kanji, hangul, full-width forms."""
    return any(unicodedata.east_asian_width(ch) in ("W", "F") for ch in text)


def initials(name: str) -> str:
    """Up to two letters: the first of each of the first two words ("Mary Jane" -> "MJ"), else the first
    character ("Akari" -> "A", "あかり" -> "あ")."""
    words = name.split()
    if not words:
        return "?"
    if len(words) >= 2:
        return (words[0][0] + words[1][0]).upper()
    return words[0][0].upper()


def avatar_pixmap(companion_id: str, name: str, size: int, *, dimmed: bool = False,
                  device_pixel_ratio: float = 1.0) -> QPixmap:
    """The avatar, ``size`` logical pixels wide; ``dimmed`` greys it out (a companion that is not here)."""
    pixels = max(1, round(size * device_pixel_ratio))
    pixmap = QPixmap(pixels, pixels)
    pixmap.setDevicePixelRatio(device_pixel_ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    color = companion_color(companion_id)
    picture = FACES.image(companion_id)
    if picture is not None:
        return _picture_avatar(pixmap, picture, size, dimmed)
    if dimmed:
        grey = round(0.3 * color.red() + 0.59 * color.green() + 0.11 * color.blue())
        color = QColor(grey, grey, grey, 150)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    painter.drawEllipse(QRectF(0.5, 0.5, size - 1, size - 1))
    letters = initials(name)
    font = QFont(painter.font())
    if is_wide(letters):
        # A kanji's strokes need pixels: at 16 px the Latin size (7 px, bold) drew 颯 as a filled box. CJK initials
        # take at least 10 px (the circle still holds them) and are bold only where the strokes stay apart.
        pixels = max(10, round(size * 0.5))
        font.setBold(pixels >= CJK_BOLD_FROM)
    else:
        pixels = max(6, round(size * 0.42))
        font.setBold(True)
    font.setPixelSize(pixels)
    painter.setFont(font)
    painter.setPen(QColor("#ffffff"))
    painter.drawText(QRectF(0, 0, size, size), Qt.AlignmentFlag.AlignCenter, letters)
    painter.end()
    return pixmap


def _picture_avatar(pixmap: QPixmap, picture: QImage, size: int, dimmed: bool) -> QPixmap:
    """``picture`` in a circle on ``pixmap`` (greyed out and faded when ``dimmed``)."""
    if dimmed:
        picture = picture.convertToFormat(QImage.Format.Format_Grayscale8)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    clip = QPainterPath()
    clip.addEllipse(QRectF(0.5, 0.5, size - 1, size - 1))
    painter.setClipPath(clip)
    if dimmed:
        painter.setOpacity(0.6)
    painter.drawImage(QRectF(0, 0, size, size), picture)
    painter.end()
    return pixmap
