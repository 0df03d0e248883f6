"""What the camera shows, in the user's words: the on-device description of a camera frame (no model looks at it).

Used for a look by a model that takes no images, and for "Show them" (a model that takes images still gets the
picture itself). :func:`describe_frame` gathers what a person would tell: the text in the picture (Tesseract:
app/devices/ocr.py) and the sheet of paper it is on; how many people are in view (faces: app/devices/faces.py);
the notable things by colour, shape and place (app/devices/picture_things.py); the light; and what changed since
the last look (the grey image it hands back for the next look remembers this description). The words, in Japanese
and English, are app/devices/picture_words.py's (:func:`in_words`, read through this module too). The measurements
(brightness, motion, main colours) stay in the description's fields for the programs that read them.
"""

from __future__ import annotations

from typing import Any, Final, cast

import cv2
import numpy as np
import numpy.typing as npt

from app.devices.faces import count_faces, face_boxes, face_detection_problem
from app.devices.ocr import Reading, read_text
from app.devices.picture_things import Box, find_things, sheet_under
from app.devices.picture_words import in_words
from companions.devices.query_bodies import Colour, SeenThing, SinceLastLook, VisionDescription

# The faces' and the words' own modules are read through this one too (the camera, "Show them", the tests).
__all__ = ["Image", "brightness", "colour_name", "count_faces", "describe_frame", "dominant_colours",
           "face_detection_problem", "in_words", "motion", "since_last_look", "small_gray"]

SOURCE_LABEL: Final = "on-device description: OpenCV and Tesseract OCR (no AI model looked at the image)"
ANALYSIS_WIDTH: Final = 320
MOTION_PIXEL_DELTA: Final = 25

Image = npt.NDArray[np.uint8]
# OpenCV's bundled type stubs differ between 4.x and 5.x (CascadeClassifier, cv2.data, kmeans overloads): the
# calls whose stubs disagree go through this untyped alias so the module type-checks on both.
_cv2: Any = cv2


def small_gray(frame_bgr: Image) -> Image:
    """The downscaled, blurred grey image the measurements (and the next motion check) use."""
    height, width = frame_bgr.shape[:2]
    scale = min(1.0, ANALYSIS_WIDTH / width)
    small = cv2.resize(frame_bgr, (max(1, int(width * scale)), max(1, int(height * scale))),
                       interpolation=cv2.INTER_AREA)
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.GaussianBlur(gray, (5, 5), 0), dtype=np.uint8)


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


class _Remembered(np.ndarray[Any, np.dtype[np.uint8]]):
    """The grey image :func:`describe_frame` hands back for the next look, carrying the description it was made
    for (``seen``), so that the next look can say what changed. The callers keep it as an image (the camera's
    ``_last_look``), which it still is."""

    seen: VisionDescription | None = None


def _remember(gray: Image, description: VisionDescription) -> Image:
    remembered = gray.view(_Remembered)
    remembered.seen = description
    return cast(Image, remembered)


def _same_place(box: Box, other: Box) -> bool:
    """Whether two boxes are mostly the same region (the white thing that is the sheet the text is on)."""
    dx = min(box[0] + box[2], other[0] + other[2]) - max(box[0], other[0])
    dy = min(box[1] + box[3], other[1] + other[3]) - max(box[1], other[1])
    return dx > 0 and dy > 0 and dx * dy > 0.6 * max(box[2] * box[3], other[2] * other[3])


def _key(thing: SeenThing) -> tuple[str, str]:
    return thing.colour, thing.shape


def since_last_look(now: VisionDescription, before: VisionDescription) -> SinceLastLook:
    """What changed from ``before`` to ``now``: people, text, things (by colour and shape) and the light."""
    then = {_key(t): t for t in before.things}
    current = {_key(t): t for t in now.things}
    moved = tuple(t for k, t in current.items() if k in then and then[k].place != t.place)
    light = ""
    if now.brightness - before.brightness < -40:
        light = "darker"
    elif now.brightness - before.brightness > 40:
        light = "brighter"
    return SinceLastLook(people_before=before.faces,
                         text_new=tuple(t for t in now.text if t not in before.text),
                         text_gone=tuple(t for t in before.text if t not in now.text),
                         things_new=tuple(t for k, t in current.items() if k not in then),
                         things_gone=tuple(t for k, t in then.items() if k not in current),
                         things_moved=moved, light=light)


def describe_frame(frame_bgr: Image, previous_gray: Image | None = None, *,
                   read: bool = True) -> tuple[VisionDescription, Image]:
    """The description of ``frame_bgr`` and the grey image to pass as ``previous_gray`` next time (it remembers
    this description: the next one says what changed). ``read=False`` reads no text.

    CPU-bound (~20-50 ms at 640x480, plus OCR: ~0.2-1 s in a Tesseract process): call it from an executor thread.
    """
    gray = small_gray(frame_bgr)
    boxes = face_boxes(gray)
    scale = frame_bgr.shape[1] / gray.shape[1]
    faces_in_frame = [(round(x * scale), round(y * scale), round(w * scale), round(h * scale))
                      for x, y, w, h in boxes or []]
    mean, light = brightness(gray)
    changed, moving = motion(gray, previous_gray)
    reading = read_text(frame_bgr) if read else Reading()
    found = find_things(frame_bgr, skip=faces_in_frame)
    paper = sheet_under(frame_bgr, [line.box for line in reading.lines])
    things = tuple(thing for thing, box in found if paper is None or not _same_place(box, paper))
    description = VisionDescription(source=SOURCE_LABEL, faces=None if boxes is None else len(boxes),
                                    brightness=round(mean, 1), brightness_label=light,
                                    motion=None if changed is None else round(changed, 4), motion_label=moving,
                                    colours=dominant_colours(frame_bgr), text=reading.texts,
                                    text_on_paper=paper is not None, text_problem=reading.problem, things=things)
    before = getattr(previous_gray, "seen", None)
    if isinstance(before, VisionDescription):
        description = description.model_copy(update={"since_last": since_last_look(description, before)})
    summaries = {language: in_words(description, language) for language in ("en", "ja")}
    description = description.model_copy(update={"summary": summaries["en"], "summaries": summaries})
    return description, _remember(gray, description)
