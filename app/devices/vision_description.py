"""An on-device description of a camera frame, computed with OpenCV alone (no model looks at the image).

Used when the companion's model does not take images: faces (the Haar cascade OpenCV ships), brightness, motion
since the previous look, and dominant colours. The result says plainly that it is an on-device measurement, so a
companion never presents it as something it "saw".
"""

from __future__ import annotations

import os
import threading
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

from companions.devices.query_bodies import Colour, VisionDescription

SOURCE_LABEL: Final = "on-device OpenCV measurement (no AI model looked at the image)"
FACE_CASCADE: Final = "haarcascade_frontalface_default.xml"
ANALYSIS_WIDTH: Final = 320
MOTION_PIXEL_DELTA: Final = 25

Image = npt.NDArray[np.uint8]
# OpenCV's bundled type stubs differ between 4.x and 5.x (CascadeClassifier, cv2.data, kmeans overloads): the
# calls whose stubs disagree go through this untyped alias so the module type-checks on both.
_cv2: Any = cv2

_cascade: Any = None  # cv2.CascadeClassifier (missing from OpenCV's type stubs)
_cascade_lock = threading.Lock()  # one classifier shared by executor threads; detectMultiScale is not re-entrant


def face_detection_problem() -> str | None:
    """Why faces cannot be counted with this OpenCV build, or None when they can.

    OpenCV 4.x ships the Haar cascades (``cv2.data.haarcascades``) and ``CascadeClassifier``; OpenCV 5.0 moved both
    out of the main package, so with it the description says that faces were not counted instead of guessing.
    """
    if not hasattr(cv2, "CascadeClassifier"):
        return f"this OpenCV build ({cv2.__version__}) has no CascadeClassifier"
    data = getattr(cv2, "data", None)
    path = os.path.join(getattr(data, "haarcascades", ""), FACE_CASCADE)
    if not os.path.isfile(path):
        return f"this OpenCV build ({cv2.__version__}) ships no {FACE_CASCADE}"
    return None


def _face_cascade() -> Any:
    global _cascade
    if _cascade is None:
        cascade = _cv2.CascadeClassifier(os.path.join(_cv2.data.haarcascades, FACE_CASCADE))
        if cascade.empty():
            raise RuntimeError(f"OpenCV's {FACE_CASCADE} could not be loaded")
        _cascade = cascade
    return _cascade


def small_gray(frame_bgr: Image) -> Image:
    """The downscaled, blurred grey image the measurements (and the next motion check) use."""
    height, width = frame_bgr.shape[:2]
    scale = min(1.0, ANALYSIS_WIDTH / width)
    small = cv2.resize(frame_bgr, (max(1, int(width * scale)), max(1, int(height * scale))),
                       interpolation=cv2.INTER_AREA)
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.GaussianBlur(gray, (5, 5), 0), dtype=np.uint8)


def count_faces(gray: Image) -> int | None:
    """Frontal faces found by OpenCV's Haar cascade, or None when this OpenCV build has none."""
    if face_detection_problem() is not None:
        return None
    with _cascade_lock:
        faces = _face_cascade().detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5, minSize=(24, 24))
    return len(faces)


def brightness(gray: Image) -> tuple[float, str]:
    mean = float(gray.mean())
    label = "dark" if mean < 50 else "dim" if mean < 100 else "normal" if mean < 180 else "bright"
    return mean, label


def motion(gray: Image, previous: Image | None) -> tuple[float | None, str]:
    """Share of pixels that changed noticeably since ``previous`` (None on the first look)."""
    if previous is None or previous.shape != gray.shape:
        return None, "unknown (first look)"
    changed = float((cv2.absdiff(gray, previous) > MOTION_PIXEL_DELTA).mean())
    label = "none" if changed < 0.005 else "a little" if changed < 0.05 else "some" if changed < 0.2 else "a lot"
    return changed, label


def colour_name(bgr: tuple[int, int, int]) -> str:
    """A plain colour word for one BGR colour (HSV thresholds)."""
    pixel = np.array([[bgr]], dtype=np.uint8)
    hue, sat, val = (int(v) for v in cv2.cvtColor(pixel, cv2.COLOR_BGR2HSV)[0, 0])
    if val < 50:
        return "black"
    if sat < 40:
        return "white" if val > 200 else "gray"
    hue2 = hue * 2  # OpenCV hue is 0..179
    if hue2 < 15 or hue2 >= 345:
        return "brown" if val < 140 else "red"
    if hue2 < 45:
        return "brown" if val < 140 else "orange"
    if hue2 < 70:
        return "yellow"
    if hue2 < 160:
        return "green"
    if hue2 < 200:
        return "cyan"
    if hue2 < 260:
        return "blue"
    if hue2 < 300:
        return "purple"
    return "pink"


def dominant_colours(frame_bgr: Image, k: int = 3) -> tuple[Colour, ...]:
    """The ``k`` main colours by k-means on a thumbnail, largest share first."""
    thumb = cv2.resize(frame_bgr, (64, 48), interpolation=cv2.INTER_AREA)
    samples = thumb.reshape(-1, 3).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    cv2.setRNGSeed(1)  # the same frame always gets the same answer
    _, labels, centers = _cv2.kmeans(samples, k, None, criteria, 2, cv2.KMEANS_PP_CENTERS)
    counts = np.bincount(labels.ravel(), minlength=k)
    merged: dict[str, tuple[float, tuple[int, int, int]]] = {}
    for index in np.argsort(-counts):
        bgr = tuple(int(c) for c in centers[index])
        share = float(counts[index]) / len(labels)
        name = colour_name((bgr[0], bgr[1], bgr[2]))
        if name in merged:
            merged[name] = (merged[name][0] + share, merged[name][1])
        else:
            merged[name] = (share, (bgr[0], bgr[1], bgr[2]))
    return tuple(Colour(name=name, hex=f"#{b[2]:02x}{b[1]:02x}{b[0]:02x}", share=round(share, 3))
                 for name, (share, b) in sorted(merged.items(), key=lambda kv: -kv[1][0]))


def describe_frame(frame_bgr: Image, previous_gray: Image | None = None) -> tuple[VisionDescription, Image]:
    """The description of ``frame_bgr`` and the grey image to pass as ``previous_gray`` next time.

    CPU-bound (~10-30 ms at 640x480): call it from an executor thread.
    """
    gray = small_gray(frame_bgr)
    faces = count_faces(gray)
    mean, light = brightness(gray)
    changed, moving = motion(gray, previous_gray)
    description = VisionDescription(source=SOURCE_LABEL, faces=faces, brightness=round(mean, 1), brightness_label=light,
                                    motion=None if changed is None else round(changed, 4), motion_label=moving,
                                    colours=dominant_colours(frame_bgr))
    return description.model_copy(update={"summary": in_words(description, "en")}), gray


# The measurements' words in Japanese (the labels above are English).
_JA_WORDS: Final = {
    "dark": "暗い", "dim": "薄暗い", "normal": "ふつう", "bright": "明るい",
    "none": "なし", "a little": "少し", "some": "いくらか", "a lot": "大きい",
    "unknown (first look)": "不明（初めて見る）",
    "black": "黒", "white": "白", "gray": "灰色", "brown": "茶色", "red": "赤", "orange": "オレンジ", "yellow": "黄色",
    "green": "緑", "cyan": "水色", "blue": "青", "purple": "紫", "pink": "ピンク",
}


def in_words(description: VisionDescription, language: str) -> str:
    """One sentence of ``description`` (from :func:`describe_frame`) in ``language`` ("ja" or English), saying
    that it was measured on the device and that no AI model looked at the image."""
    faces, mean, light = description.faces, description.brightness, description.brightness_label
    changed, moving, colours = description.motion, description.motion_label, description.colours
    if language == "ja":
        def ja(word: str) -> str:
            return _JA_WORDS.get(word, word)

        face_text = (f"顔は数えていません（{face_detection_problem()}）" if faces is None
                     else f"顔を{faces}つ検出" if faces else "顔は見つかりません")
        motion_text = ja(moving) if changed is None else f"{ja(moving)}（画像の{changed * 100:.1f}%が変化）"
        colour_text = "、".join(f"{ja(c.name)} {round(c.share * 100)}%" for c in colours)
        return (f"端末上の説明（OpenCV による計測で、AI モデルは画像を見ていません）: {face_text}、"
                f"明るさ {ja(light)}（{mean:.0f}/255）、前回見たときからの動き: {motion_text}、主な色: {colour_text}。")
    if faces is None:
        face_text = f"faces not counted ({face_detection_problem()})"
    else:
        face_text = f"{faces} face{'s' if faces != 1 else ''} detected"
    motion_text = moving if changed is None else f"{moving} ({changed * 100:.1f}% of the image changed)"
    colour_text = ", ".join(f"{c.name} {round(c.share * 100)}%" for c in colours)
    return (f"On-device description (OpenCV, no AI model looked at the image): "
            f"{face_text}; brightness {light} ({mean:.0f}/255); "
            f"motion since the last look: {motion_text}; dominant colours: {colour_text}.")
