"""The text in a picture, read on the device by Tesseract (Debian's ``tesseract-ocr`` with its Japanese and English
data: ``tesseract-ocr-jpn``, ``tesseract-ocr-eng``; scripts/bootstrap.sh installs them).

The ``tesseract`` command is run as a process (the picture as PNG on its stdin, TSV on its stdout) with a timeout,
so a slow or broken install costs a look at most :data:`TIMEOUT_S` and never the app. Tesseract's layout analysis
reads the whole picture first; the likely lines of text it did not read (found by their strokes' edges) are then
read once more, cut out and stacked in one strip, in a second run. Words Tesseract is unsure of
are left out (a camera picture of a room otherwise "reads" as scattered symbols); the words of one line are joined
as the script writes them (no spaces between Japanese characters). When Tesseract or its language data is missing,
:class:`Reading` says so in ``problem`` and reads nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import unicodedata
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

TESSERACT: Final = "tesseract"
LANGUAGES: Final = ("jpn", "eng")  # Tesseract's names; the first that is installed reads alone when one is missing
TIMEOUT_S: Final = 4.0  # both readings together: a look must answer within the vision query's 10 s, camera included
MAX_WIDTH: Final = 1600  # a larger picture is shrunk: reading time grows with the pixels, not the words
MIN_WORD_CONFIDENCE: Final = 50.0
MIN_LINE_CONFIDENCE: Final = 70.0
MIN_TEXT_HEIGHT: Final = 10  # pixels of a line of text the second reading looks for (at most MAX_WIDTH wide)
MAX_TEXT_HEIGHT: Final = 160
MAX_BOXES: Final = 8
STRIP_LINE_HEIGHT: Final = 48  # a likely line is enlarged to this height for the second reading
GAP: Final = 24
TOO_SLOW: Final = "reading the text took longer than"
NOT_INSTALLED: Final = "no OCR is installed (Debian's tesseract-ocr with tesseract-ocr-jpn and tesseract-ocr-eng)"

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Line:
    """One line of text read, with its box in the picture's pixels (x, y, width, height) and mean confidence."""

    text: str
    box: tuple[int, int, int, int]
    confidence: float


@dataclass(frozen=True)
class Reading:
    """What OCR read in a picture: its lines, top to bottom, or the ``problem`` that kept it from reading."""

    lines: tuple[Line, ...] = ()
    problem: str | None = None

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(line.text for line in self.lines)


# (the tesseract command's path, the languages it has): asked again when the command changes, so that a user who
# installs tesseract-ocr after reading that it is missing is read to at the next look, without a restart.
_known: tuple[str, tuple[str, ...]] | None = None


def installed_languages() -> tuple[str, ...] | None:
    """The languages of :data:`LANGUAGES` Tesseract has data for here; None when the command is missing."""
    global _known
    command = shutil.which(TESSERACT)
    if command is None:
        return None
    if _known is not None and _known[0] == command:
        return _known[1]
    try:
        listed = subprocess.run([command, "--list-langs"], capture_output=True, text=True, timeout=TIMEOUT_S,
                                check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    # "List of available languages in ...:" on the first line, then one name a line (stdout or, in older
    # versions, stderr).
    names = {line.strip() for line in (listed.stdout + "\n" + listed.stderr).splitlines()[1:]}
    languages = tuple(language for language in LANGUAGES if language in names)
    if languages:
        _known = (command, languages)  # data installed later is found at the next look too
    return languages


def ocr_problem() -> str | None:
    """Why text cannot be read here, or None when it can."""
    languages = installed_languages()
    if languages is None:
        return NOT_INSTALLED
    if not languages:
        return "OCR has no Japanese or English data (Debian's tesseract-ocr-jpn, tesseract-ocr-eng)"
    return None


def _is_cjk(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def join_words(words: list[str]) -> str:
    """The words of one line as the script writes them: a space between Latin words, none between Japanese ones."""
    out = ""
    for word in words:
        if out and not (_is_cjk(out[-1]) and _is_cjk(word[0])):
            out += " "
        out += word
    return out


_LETTER = re.compile(r"[^\W_]", re.UNICODE)  # a letter or digit of any script (kana and kanji included)


def _meaningful(text: str) -> bool:
    """A line worth saying: a word of two letters or digits at least. Lone symbols and scattered single letters
    ("E ニ a", read in the traces of a circuit board) are noise; a Japanese line is one word, joined."""
    return any(len(_LETTER.findall(word)) >= 2 for word in text.split())


_Word = tuple[str, float, int, int, int, int]  # text, confidence, left, top, width, height


def _same_rows_joined(groups: list[list[_Word]]) -> list[list[_Word]]:
    """Tesseract's lines, with the pieces of one printed line it put in different blocks joined (a column of
    "LINE" beside a column of "1 OF A PAGE"): on the same row, less than two heights apart."""
    def bounds(words: list[_Word]) -> tuple[int, int, int, int]:
        return (min(w[2] for w in words), min(w[3] for w in words), max(w[2] + w[4] for w in words),
                max(w[3] + w[5] for w in words))

    joined: list[list[_Word]] = []
    for group in sorted(groups, key=lambda g: bounds(g)[0]):
        x0, y0, _x1, y1 = bounds(group)
        for line in joined:
            _lx0, ly0, lx1, ly1 = bounds(line)
            overlap = min(y1, ly1) - max(y0, ly0)
            height = max(y1 - y0, ly1 - ly0)
            if overlap > 0.5 * min(y1 - y0, ly1 - ly0) and -height < x0 - lx1 < 2 * height:
                line.extend(group)
                break
        else:
            joined.append(list(group))
    return [sorted(line, key=lambda w: w[2]) for line in joined]


def parse_tsv(tsv: str, scale: float = 1.0) -> tuple[Line, ...]:
    """Tesseract's TSV output as lines (confident words only), boxes scaled back by ``1 / scale``."""
    grouped: dict[tuple[str, str, str], list[_Word]] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) != 12 or not cells[11].strip():
            continue
        try:
            confidence = float(cells[10])
            left, top, width, height = (int(c) for c in cells[6:10])
        except ValueError:
            continue
        if confidence < MIN_WORD_CONFIDENCE:
            continue
        grouped.setdefault((cells[2], cells[3], cells[4]), []).append(
            (cells[11].strip(), confidence, left, top, width, height))
    lines = []
    for words in _same_rows_joined(list(grouped.values())):
        text = join_words([w[0] for w in words])
        mean = sum(w[1] for w in words) / len(words)
        if mean < MIN_LINE_CONFIDENCE or not _meaningful(text):
            continue
        x0, y0 = min(w[2] for w in words), min(w[3] for w in words)
        x1, y1 = max(w[2] + w[4] for w in words), max(w[3] + w[5] for w in words)
        box = (round(x0 / scale), round(y0 / scale), round((x1 - x0) / scale), round((y1 - y0) / scale))
        lines.append(Line(text=text, box=box, confidence=round(mean, 1)))
    return tuple(sorted(lines, key=lambda line: (line.box[1], line.box[0])))


def text_boxes(gray: Image) -> list[tuple[int, int, int, int]]:
    """Where lines of text likely are in ``gray`` (x, y, width, height): strokes found by their edges, joined along
    the line. Tesseract's own layout analysis misses a short label beside other shapes (a face, a box), which a
    second reading of these boxes alone finds."""
    edges = cv2.morphologyEx(gray, cv2.MORPH_GRADIENT, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))
    _, strokes = cv2.threshold(edges, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    joined = cv2.morphologyEx(strokes, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (9, 1)))
    count, _, stats, _ = cv2.connectedComponentsWithStats(joined)
    words = []
    for x, y, w, h, area in (tuple(int(v) for v in row) for row in stats[1:count]):
        if MIN_TEXT_HEIGHT <= h <= MAX_TEXT_HEIGHT and area >= 0.3 * w * h:
            words.append([x, y, w, h])
    lines: list[list[int]] = []
    for x, y, w, h in sorted(words, key=lambda b: b[0]):
        for line in lines:  # the next word of a line: on the same row, less than a line's height away
            lx, ly, lw, lh = line
            same_row = min(ly + lh, y + h) - max(ly, y) > 0.5 * min(lh, h)
            if same_row and 0 <= x - (lx + lw) < 1.5 * max(lh, h):
                line[:] = [lx, min(ly, y), x + w - lx, max(ly + lh, y + h) - min(ly, y)]
                break
        else:
            lines.append([x, y, w, h])
    # A line is wider than high (a lone round or square shape is not text).
    return [(x, y, w, h) for x, y, w, h in sorted(lines, key=lambda b: (b[1], b[0])) if w >= 1.5 * h][:MAX_BOXES]


# Tesseract's OpenMP threads, one: a look shares the two cores with the model runner, and OpenMP's threads spin
# waiting for each other on a busy machine (measured on a 4-line picture at load average 2: 0.47-0.58 s against
# 0.56-0.71 s with a thread per core; at load 5-7 a reading ran past its 4 s bound).
ONE_THREAD: Final = {"OMP_THREAD_LIMIT": "1"}


def _run(picture: Image, languages: tuple[str, ...], psm: str, timeout_s: float) -> str | Reading:
    """Tesseract's TSV for ``picture``, or the Reading that says why there is none."""
    ok, png = cv2.imencode(".png", picture)
    if not ok:
        return Reading(problem="the picture could not be handed to OCR")
    command = [TESSERACT, "stdin", "stdout", "-l", "+".join(languages), "--psm", psm, "tsv"]
    try:
        done = subprocess.run(command, input=png.tobytes(), capture_output=True, timeout=timeout_s, check=False,
                              env={**os.environ, **ONE_THREAD})
    except subprocess.TimeoutExpired:
        return Reading(problem=f"{TOO_SLOW} {timeout_s:g} s")
    except OSError as err:
        return Reading(problem=f"OCR could not run: {err.strerror or err}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return Reading(problem=f"OCR failed: {said[-1] if said else f'exit code {done.returncode}'}")
    return done.stdout.decode("utf-8", "replace")


def _inside(box: tuple[int, int, int, int], lines: tuple[Line, ...]) -> bool:
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    return any(x - 4 <= cx <= x + w + 4 and y - 4 <= cy <= y + h + 4 for x, y, w, h in (line.box for line in lines))


def _strip_of(gray: Image, boxes: list[tuple[int, int, int, int]]) -> tuple[Image, list[tuple[int, int]]]:
    """The boxes cut out of ``gray``, dark text on white each, one under the other with white between; and where each
    starts and ends in the strip (rows)."""
    crops: list[Image] = []
    rows: list[tuple[int, int]] = []
    top = GAP
    for x, y, w, h in boxes:
        pad = h // 2
        cut = gray[max(0, y - pad):y + h + pad, max(0, x - pad):x + w + pad]
        crop = np.asarray(cv2.threshold(cut, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[1], dtype=np.uint8)
        border = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
        if border.mean() < 128:  # light text on a dark ground
            crop = 255 - crop
        if crop.shape[0] < STRIP_LINE_HEIGHT:
            factor = STRIP_LINE_HEIGHT / crop.shape[0]
            crop = np.asarray(cv2.resize(crop, (round(crop.shape[1] * factor), STRIP_LINE_HEIGHT),
                                         interpolation=cv2.INTER_CUBIC), dtype=np.uint8)
        crops.append(crop)
        rows.append((top, top + crop.shape[0]))
        top += crop.shape[0] + GAP
    strip = np.full((top, max(c.shape[1] for c in crops) + 2 * GAP), 255, dtype=np.uint8)
    for crop, (start, _) in zip(crops, rows, strict=True):
        strip[start:start + crop.shape[0], GAP:GAP + crop.shape[1]] = crop
    return strip, rows


def read_text(frame_bgr: Image, timeout_s: float = TIMEOUT_S) -> Reading:
    """The text in ``frame_bgr`` (blocking: up to ``timeout_s`` in all; call it from an executor thread): Tesseract
    reads the whole picture, then, once, the likely lines of text it did not read."""
    started = time.monotonic()
    problem = ocr_problem()
    languages = installed_languages()
    if problem is not None or not languages:
        return Reading(problem=problem)
    gray = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY) if frame_bgr.ndim == 3 else frame_bgr
    scale = min(1.0, MAX_WIDTH / gray.shape[1])
    if scale < 1.0:
        gray = cv2.resize(gray, (round(gray.shape[1] * scale), round(gray.shape[0] * scale)),
                          interpolation=cv2.INTER_AREA)
    gray = np.asarray(gray, dtype=np.uint8)
    # --psm 3: find the blocks of text anywhere in the picture (a sheet held up, a screen, a label).
    whole = _run(gray, languages, "3", timeout_s)
    if isinstance(whole, Reading):
        return whole
    lines = parse_tsv(whole, scale)
    missed = [box for box in text_boxes(gray)
              if not _inside((round(box[0] / scale), round(box[1] / scale), round(box[2] / scale),
                              round(box[3] / scale)), lines)]
    if not missed:
        return Reading(lines=lines)
    left = timeout_s - (time.monotonic() - started)
    if left < 0.5:
        return Reading(lines=lines)  # no time for a second reading: what the first found stands
    strip, rows = _strip_of(gray, missed)
    # --psm 6: the strip is one block of text, a line a box.
    again = _run(strip, languages, "6", left)
    if isinstance(again, Reading):
        return Reading(lines=lines)  # what the first reading found still stands
    found = list(lines)
    for line in parse_tsv(again):
        middle = line.box[1] + line.box[3] / 2
        for box, (start, end) in zip(missed, rows, strict=True):
            if start <= middle <= end:
                where = (round(box[0] / scale), round(box[1] / scale), round(box[2] / scale), round(box[3] / scale))
                found.append(Line(text=line.text, box=where, confidence=line.confidence))
                break
    return Reading(lines=tuple(sorted(found, key=lambda line: (line.box[1], line.box[0]))))
