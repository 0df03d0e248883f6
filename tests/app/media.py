"""Generated media for the device tests: small video files written with OpenCV itself."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np


def draw_face(image: np.ndarray, center: tuple[int, int] = (400, 240)) -> None:
    """A crude frontal face (skin oval, two dark eyes, a mouth): enough for OpenCV's Haar cascade to find."""
    x, y = center
    cv2.ellipse(image, (x, y), (80, 105), 0, 0, 360, (150, 180, 225), thickness=-1)
    cv2.circle(image, (x - 30, y - 25), 10, (30, 30, 30), thickness=-1)
    cv2.circle(image, (x + 30, y - 25), 10, (30, 30, 30), thickness=-1)
    cv2.ellipse(image, (x, y + 50), (30, 12), 0, 0, 180, (60, 60, 120), thickness=-1)


def write_test_video(path: Path, *, frames: int = 30, fps: float = 30.0, width: int = 640, height: int = 480,
                     background: tuple[int, int, int] = (40, 90, 160), moving: bool = True,
                     face: bool = False) -> Path:
    """An MJPG/AVI clip: a coloured background, a white square sliding across, a frame counter drawn in, and
    optionally a drawn face that stays still."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (width, height))
    assert writer.isOpened(), "OpenCV cannot write MJPG/AVI here"
    try:
        for index in range(frames):
            image = np.full((height, width, 3), background, dtype=np.uint8)
            x = (index * 17) % (width - 120) if moving else 40
            cv2.rectangle(image, (x, 180), (x + 120, 300), (255, 255, 255), thickness=-1)
            cv2.putText(image, f"{index:03d}", (20, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (0, 0, 0), 3)
            if face:
                draw_face(image, (width - 160, height // 2))
            writer.write(image)
    finally:
        writer.release()
    return path
