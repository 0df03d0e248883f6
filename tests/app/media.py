"""Generated media for the device tests: small video files written with OpenCV itself."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np


def write_test_video(path: Path, *, frames: int = 30, fps: float = 30.0, width: int = 640, height: int = 480,
                     background: tuple[int, int, int] = (40, 90, 160), moving: bool = True) -> Path:
    """An MJPG/AVI clip: a coloured background, a white square sliding across, a frame counter drawn in."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (width, height))
    assert writer.isOpened(), "OpenCV cannot write MJPG/AVI here"
    try:
        for index in range(frames):
            image = np.full((height, width, 3), background, dtype=np.uint8)
            x = (index * 17) % (width - 120) if moving else 40
            cv2.rectangle(image, (x, 180), (x + 120, 300), (255, 255, 255), thickness=-1)
            cv2.putText(image, f"{index:03d}", (20, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (0, 0, 0), 3)
            writer.write(image)
    finally:
        writer.release()
    return path
