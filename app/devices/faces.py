"""The people in a camera picture: frontal faces found by the Haar cascade OpenCV ships (no model).

One classifier is shared by the executor threads that describe looks (``detectMultiScale`` is not re-entrant, so
it runs under a lock). OpenCV 5.0 ships neither ``CascadeClassifier`` nor the cascades: :func:`face_detection_problem`
says so, and the description says the people were not counted instead of guessing.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

FACE_CASCADE: Final = "haarcascade_frontalface_default.xml"

Image = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]  # x, y, width, height
# OpenCV's bundled type stubs differ between 4.x and 5.x (CascadeClassifier, cv2.data): these calls go through this
# untyped alias so the module type-checks on both.
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


def face_boxes(gray: Image, *, scale_factor: float = 1.1) -> list[Box] | None:
    """The frontal faces OpenCV's Haar cascade finds in ``gray`` (x, y, width, height in its pixels), or None when
    this OpenCV build has no cascade. A larger ``scale_factor`` tries fewer face sizes: faster, a little less sure."""
    if face_detection_problem() is not None:
        return None
    with _cascade_lock:
        faces = _face_cascade().detectMultiScale(gray, scaleFactor=scale_factor, minNeighbors=5, minSize=(24, 24))
    return [(int(x), int(y), int(w), int(h)) for x, y, w, h in faces]


def count_faces(gray: Image) -> int | None:
    """Frontal faces found by OpenCV's Haar cascade, or None when this OpenCV build has none."""
    boxes = face_boxes(gray)
    return None if boxes is None else len(boxes)
