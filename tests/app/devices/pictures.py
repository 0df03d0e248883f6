"""Pictures the camera-words tests make themselves: a sheet of paper with words, coloured shapes, drawn faces, and
Japanese text rendered by Qt with the Noto CJK font (OpenCV draws only Latin letters)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from tests.app.media import draw_face

Image = npt.NDArray[np.uint8]
GREEN_ROOM = (60, 110, 60)  # BGR
RED = (30, 30, 220)
BLUE = (200, 60, 20)
YELLOW = (30, 220, 230)
NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")


def room(width: int = 640, height: int = 480, colour: tuple[int, int, int] = GREEN_ROOM) -> Image:
    return np.full((height, width, 3), colour, dtype=np.uint8)


def paper_with_words(image: Image, words: str, top_left: tuple[int, int] = (120, 40),
                     size: tuple[int, int] = (400, 120), scale: float = 1.4) -> Image:
    """A white sheet with ``words`` in black (Hershey letters ``scale`` 1.4: about 32 px high)."""
    x, y = top_left
    cv2.rectangle(image, (x, y), (x + size[0], y + size[1]), (245, 245, 245), thickness=-1)
    cv2.putText(image, words, (x + 20, y + size[1] // 2 + 16), cv2.FONT_HERSHEY_SIMPLEX, scale, (20, 20, 20), 3)
    return image


def hello_madoi_with_a_red_ball() -> Image:
    """The issue's picture: "HELLO MADOI" on paper, a red ball in the middle, a green room behind."""
    image = paper_with_words(room(), "HELLO MADOI")
    cv2.circle(image, (320, 300), 60, RED, thickness=-1)
    return image


def with_faces(image: Image, centers: list[tuple[int, int]]) -> Image:
    for center in centers:
        draw_face(image, center)
    return image


def qt_text_picture(lines: list[str], pixel_size: int, width: int = 640, height: int = 480) -> Image:
    """``lines`` in black on white, ``pixel_size`` px high, drawn by Qt with Noto Sans CJK (needs a QGuiApplication)."""
    from PySide6.QtGui import QColor, QFont, QFontDatabase, QImage, QPainter

    font_id = QFontDatabase.addApplicationFont(str(NOTO_CJK))
    families = QFontDatabase.applicationFontFamilies(font_id)
    assert families, f"Qt could not load {NOTO_CJK}"
    picture = QImage(width, height, QImage.Format.Format_RGB888)
    picture.fill(QColor(245, 245, 245))
    painter = QPainter(picture)
    font = QFont(families[0])
    font.setPixelSize(pixel_size)
    painter.setFont(font)
    painter.setPen(QColor(15, 15, 15))
    for number, line in enumerate(lines):
        painter.drawText(30, 60 + number * (pixel_size * 2 + 10), line)
    painter.end()
    rows = np.frombuffer(picture.constBits(), dtype=np.uint8).reshape(height, picture.bytesPerLine())
    rgb = rows[:, : width * 3].reshape(height, width, 3)
    return np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), dtype=np.uint8)
