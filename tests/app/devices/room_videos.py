"""Videos of a room in front of the camera, for the noticing tests and bench/presence.py: scenes in a row (nobody, a
person's drawn face, two, something held up close, the light dimmed or out), with the sensor noise of a webcam in
every frame (drawn from a pool of noise fields, so no two frames in a row are alike) and lighting that may change
within a scene."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from tests.app.media import draw_face

RIGHT = (470, 250)  # where the first person sits (a drawn face's centre, in a 640 x 480 picture)
LEFT = (170, 250)  # the second person


@dataclass(frozen=True)
class Scene:
    seconds: float
    faces: tuple[tuple[int, int], ...] = ()  # the drawn faces' centres
    held_up: bool = False  # a large book held up close, left of the middle
    light: float = 1.0  # the picture's light at the scene's start (0.1: the light is out)
    light_to: float | None = None  # and at its end (a lamp dimmed, the sun behind a cloud)
    noise: float = 1.0  # the sensor's noise, times the video's (a darker room is noisier on a webcam)


def room(width: int = 640, height: int = 480) -> np.ndarray:
    """An empty room: a wall lit from one side, a shelf with books, a door, a desk's edge."""
    ramp = np.linspace(185, 135, width, dtype=np.float32)
    image = np.empty((height, width, 3), dtype=np.float32)
    image[:] = np.stack([ramp * 0.85, ramp * 0.95, ramp], axis=-1)
    cv2.rectangle(image, (40, 60), (250, 200), (70, 100, 130), thickness=-1)  # the shelf
    for index, colour in enumerate(((40, 40, 160), (150, 60, 30), (40, 130, 60), (30, 160, 200))):
        x = 55 + index * 45
        cv2.rectangle(image, (x, 80), (x + 30, 190), colour, thickness=-1)  # books on it
    cv2.rectangle(image, (width - 150, 30), (width - 40, 400), (90, 110, 140), thickness=-1)  # the door
    cv2.rectangle(image, (0, height - 70), (width, height), (60, 80, 110), thickness=-1)  # the desk
    return image


NOISE_FIELDS = 8  # noise fields per video: making one per frame would take most of the time to write it


def noise_fields(rng: np.random.Generator, shape: tuple[int, ...], sigma: float) -> list[np.ndarray]:
    return [rng.normal(0.0, sigma, shape).astype(np.float32) for _ in range(NOISE_FIELDS)]


def scene_frame(base: np.ndarray, scene: Scene, progress: float, noise: np.ndarray) -> np.ndarray:
    image = base.copy()
    for centre in scene.faces:
        x, y = centre
        cv2.rectangle(image, (x - 110, y + 90), (x + 110, image.shape[0]), (90, 60, 50), thickness=-1)  # shoulders
        draw_face(image, centre)
    if scene.held_up:
        cv2.rectangle(image, (30, 50), (360, 440), (215, 235, 245), thickness=-1)  # a book, close to the lens
        cv2.putText(image, "BOOK", (80, 270), cv2.FONT_HERSHEY_SIMPLEX, 2.4, (30, 40, 190), 6)
    end = scene.light if scene.light_to is None else scene.light_to
    image *= scene.light + (end - scene.light) * progress
    image += noise * scene.noise
    return np.asarray(np.clip(image, 0, 255), dtype=np.uint8)


def write_room_video(path: Path, scenes: Sequence[Scene], *, fps: float = 10.0, noise: float = 6.0,
                     seed: int = 0) -> Path:
    """An MJPG/AVI clip of ``scenes`` one after another, 640 x 480 at ``fps``."""
    base = room()
    height, width = base.shape[:2]
    rng = np.random.default_rng(seed)
    fields = noise_fields(rng, base.shape, noise)
    previous = -1
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (width, height))
    assert writer.isOpened(), "OpenCV cannot write MJPG/AVI here"
    try:
        for scene in scenes:
            frames = max(1, round(scene.seconds * fps))
            for index in range(frames):
                pick = int(rng.integers(NOISE_FIELDS - 1))
                previous = pick if pick < previous else pick + 1  # never the field of the frame before
                writer.write(scene_frame(base, scene, index / frames, fields[previous]))
    finally:
        writer.release()
    return path


def scene_starts(scenes: Sequence[Scene]) -> list[float]:
    """When each scene starts, in seconds from the video's start."""
    starts, at = [], 0.0
    for scene in scenes:
        starts.append(at)
        at += scene.seconds
    return starts
