"""Notable things in a picture, as a person points at them: "a red round thing in the middle", "a white sheet".

OpenCV alone, no model: each pixel of a small copy gets a plain colour word (HSV thresholds, the same words as the
main colours), the pixels of one colour are cut into connected regions, and a region large enough to notice and
smaller than the background is a thing: its colour, its shape (round, square, rectangle, long, or none to speak of,
from its outline) and where it is on a 3 x 3 grid of the picture (its own left and right). Faces are left out
(the people are counted apart), and so is the background (the colour of most of the picture).
:func:`sheet_under` finds the sheet of paper text was read on: the light, colourless region around the text, closed
on every side (a sheet held up, not a bright wall), lit as the room is (a sheet in a dim room is grey, not white).
"""

from __future__ import annotations

import math
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from companions.devices.query_bodies import SeenThing

Image = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]  # x, y, width, height

ANALYSIS_WIDTH: Final = 320
MIN_SHARE: Final = 0.012  # a coloured thing smaller than this share of the picture is not worth saying
MIN_PLAIN_SHARE: Final = 0.04  # white, grey and black things must be larger: shadows and letters are those colours
MAX_SHARE: Final = 0.45  # larger is the background, or a wall
MAX_THINGS: Final = 4
# Colour words by hue (degrees, 0..360), as vision_description.colour_name names one colour.
_HUES: Final = (("red", 0, 15), ("orange", 15, 45), ("yellow", 45, 70), ("green", 70, 160), ("cyan", 160, 200),
                ("blue", 200, 260), ("purple", 260, 300), ("pink", 300, 345), ("red", 345, 361))
COLOURED_SATURATION: Final = 90  # below it a colour is too washed out to name a thing by (walls, skin in shade)
PLAIN: Final = ("white", "gray", "black")
PLACES: Final = (("top left", "top", "top right"), ("left", "middle", "right"),
                 ("bottom left", "bottom", "bottom right"))


def colour_words(frame_bgr: Image) -> npt.NDArray[np.str_]:
    """A colour word for every pixel of ``frame_bgr`` ("" for a colour too washed out to say)."""
    hsv = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2HSV)
    hue = hsv[..., 0].astype(np.int32) * 2
    sat, val = hsv[..., 1].astype(np.int32), hsv[..., 2].astype(np.int32)
    words = np.full(hue.shape, "", dtype="<U6")
    coloured = (sat >= COLOURED_SATURATION) & (val >= 60)
    for name, low, high in _HUES:
        words[coloured & (hue >= low) & (hue < high)] = name
    # Dark oranges are brown, as colour_name says; so are dark reds, unless vivid (the shaded side of a red ball).
    red = (hue < 15) | (hue >= 345)
    words[coloured & (val < 140) & (((hue >= 15) & (hue < 45)) | (red & (sat < 150)))] = "brown"
    words[(sat < 40) & (val > 190)] = "white"
    words[val < 50] = "black"
    return words


def place_of(center: tuple[float, float], size: tuple[int, int]) -> str:
    """Where ``center`` (x, y) is in a picture of ``size`` (width, height), in words of a 3 x 3 grid."""
    column = min(2, max(0, int(3 * center[0] / size[0])))
    row = min(2, max(0, int(3 * center[1] / size[1])))
    return PLACES[row][column]


def shape_of(contour: npt.NDArray[np.int32], area: float) -> str:
    """``round``, ``square``, ``rectangle``, ``long`` or ``""`` from a region's outline."""
    perimeter = cv2.arcLength(contour, True)
    if perimeter <= 0:
        return ""
    _, (width, height), _ = cv2.minAreaRect(contour)
    if min(width, height) <= 0:
        return ""
    aspect = max(width, height) / min(width, height)
    circularity = 4 * math.pi * area / (perimeter * perimeter)
    fill = area / (width * height)  # of the rotated bounding box
    if circularity > 0.8 and aspect < 1.3:
        return "round"
    if aspect > 3.0 and fill > 0.6:
        return "long"
    if fill > 0.85:
        return "square" if aspect < 1.2 else "rectangle"
    return ""


def _overlaps(box: Box, others: list[Box]) -> bool:
    x, y, w, h = box
    for ox, oy, ow, oh in others:
        dx = min(x + w, ox + ow) - max(x, ox)
        dy = min(y + h, oy + oh) - max(y, oy)
        if dx > 0 and dy > 0 and dx * dy > 0.3 * min(w * h, ow * oh):
            return True
    return False


def find_things(frame_bgr: Image, skip: list[Box] | None = None) -> tuple[tuple[SeenThing, Box], ...]:
    """The notable things in ``frame_bgr``, largest first, each with its box in ``frame_bgr``'s pixels; regions that
    overlap a box of ``skip`` (the faces) are left out."""
    height, width = frame_bgr.shape[:2]
    scale = min(1.0, ANALYSIS_WIDTH / width)
    small = np.asarray(cv2.GaussianBlur(cv2.resize(frame_bgr, (max(1, round(width * scale)),
                                                               max(1, round(height * scale))),
                                                   interpolation=cv2.INTER_AREA), (3, 3), 0), dtype=np.uint8)
    words = colour_words(small)
    total = float(words.size)
    skipped = [(round(x * scale), round(y * scale), round(w * scale), round(h * scale)) for x, y, w, h in skip or []]
    kernel = np.ones((3, 3), np.uint8)
    found: list[tuple[float, SeenThing, Box]] = []
    for name in (str(n) for n in np.unique(words) if n):
        mask = np.asarray(words == name, dtype=np.uint8) * 255
        if mask.mean() / 255 > 0.6:
            continue  # the background
        mask = np.asarray(cv2.morphologyEx(cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel), cv2.MORPH_CLOSE, kernel),
                          dtype=np.uint8)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        least = MIN_PLAIN_SHARE if name in PLAIN else MIN_SHARE
        for contour in contours:
            area = float(cv2.contourArea(contour))
            share = area / total
            if share < least or share > MAX_SHARE:
                continue
            x, y, w, h = cv2.boundingRect(contour)
            if _overlaps((x, y, w, h), skipped):
                continue
            moments = cv2.moments(contour)
            center = (moments["m10"] / moments["m00"], moments["m01"] / moments["m00"]) if moments["m00"] else (
                x + w / 2, y + h / 2)
            place = place_of(center, (small.shape[1], small.shape[0]))
            shape = shape_of(np.asarray(contour, dtype=np.int32), area)
            thing = SeenThing(colour=name, shape=shape, place=place, share=round(share, 3))
            box = (round(x / scale), round(y / scale), round(w / scale), round(h / scale))
            found.append((share, thing, box))
    found.sort(key=lambda item: -item[0])
    return tuple((thing, box) for _, thing, box in found[:MAX_THINGS])


def sheet_under(frame_bgr: Image, boxes: list[Box]) -> Box | None:
    """The sheet of paper the text in ``boxes`` (x, y, width, height) is written on, if it is on one: the light,
    colourless region around the text that does not reach the picture's edge; its box in ``frame_bgr``'s pixels."""
    if not boxes:
        return None
    height, width = frame_bgr.shape[:2]
    hsv = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2HSV)
    sat, val = hsv[..., 1], hsv[..., 2]
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[0] + b[2] for b in boxes), max(b[1] + b[3] for b in boxes)
    pad = max(4, (y1 - y0) // 4)
    around = val[max(0, y0 - pad):y1 + pad, max(0, x0 - pad):x1 + pad]
    if around.size == 0:
        return None
    paper_light = float(np.percentile(around, 90))  # the sheet's own brightness, however the room is lit
    if paper_light < 110:
        return None  # text on something dark is not on paper
    light = np.asarray((sat < 60) & (val >= 0.8 * paper_light), dtype=np.uint8) * 255
    light[y0:y1, x0:x1] = 255  # the letters are part of the sheet
    light = np.asarray(cv2.morphologyEx(light, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)), dtype=np.uint8)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(light)
    label = int(labels[(y0 + y1) // 2, (x0 + x1) // 2])
    if label == 0:
        return None
    x, y, w, h, area = (int(v) for v in stats[label])
    touches_edge = x <= 1 or y <= 1 or x + w >= width - 1 or y + h >= height - 1
    if touches_edge or area > 0.7 * width * height:
        return None  # a wall, a screen filling the view: not a sheet
    margin = pad // 2
    if x > x0 - margin or y > y0 - margin or x + w < x1 + margin or y + h < y1 + margin:
        return None  # no light margin around the text: it is written on something else
    return (x, y, w, h)
