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


def shaded_ball(image: Image, center: tuple[int, int], radius: int, colour: tuple[int, int, int] = RED) -> Image:
    """A ball lit from the top left: bright on one side, dark on the other, with a small highlight."""
    ys, xs = np.mgrid[0:image.shape[0], 0:image.shape[1]]
    dx, dy = xs - center[0], ys - center[1]
    inside = dx * dx + dy * dy <= radius * radius
    light = np.clip(1.0 - 0.55 * ((dx + dy) / (2 * radius) + 0.5), 0.35, 1.0)  # 1 at the top left, 0.35 behind
    for channel in range(3):
        image[..., channel] = np.where(inside, (colour[channel] * light).astype(np.uint8), image[..., channel])
    cv2.circle(image, (center[0] - radius // 3, center[1] - radius // 3), max(2, radius // 8), (235, 235, 250), -1)
    return image


def as_a_webcam_sees_it(image: Image, light: float = 0.7, seed: int = 3) -> Image:
    """``image`` in a dimmer room, with sensor noise, JPEG-compressed as the camera does (quality 80)."""
    noise = np.random.default_rng(seed).normal(0, 6, image.shape)
    seen = np.clip(image.astype(np.float64) * light + noise, 0, 255).astype(np.uint8)
    ok, jpeg = cv2.imencode(".jpg", seen, [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert ok
    return np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), dtype=np.uint8)


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
