"""The text in a picture, read on the device by Tesseract (Debian's ``tesseract-ocr`` with its Japanese and English
data: ``tesseract-ocr-jpn``, ``tesseract-ocr-eng``; scripts/bootstrap.sh installs them).

The ``tesseract`` command is run as a process (the picture as PNG on its stdin, TSV on its stdout) with a timeout,
so a slow or broken install costs a look at most :data:`TIMEOUT_S` and never the app. Words Tesseract is unsure of
are left out (a camera picture of a room otherwise "reads" as scattered symbols); the words of one line are joined
as the script writes them (no spaces between Japanese characters). When Tesseract or its language data is missing,
:class:`Reading` says so in ``problem`` and reads nothing.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import unicodedata
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

TESSERACT: Final = "tesseract"
LANGUAGES: Final = ("jpn", "eng")  # Tesseract's names; the first that is installed reads alone when one is missing
TIMEOUT_S: Final = 10.0
MAX_WIDTH: Final = 1600  # a larger picture is shrunk: reading time grows with the pixels, not the words
MIN_WORD_CONFIDENCE: Final = 50.0
MIN_LINE_CONFIDENCE: Final = 70.0
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


@functools.cache
def installed_languages() -> tuple[str, ...] | None:
    """The languages of :data:`LANGUAGES` Tesseract has data for here; None when the command is missing."""
    if shutil.which(TESSERACT) is None:
        return None
    try:
        listed = subprocess.run([TESSERACT, "--list-langs"], capture_output=True, text=True, timeout=TIMEOUT_S,
                                check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    # "List of available languages in ...:" on the first line, then one name a line (stdout or, in older
    # versions, stderr).
    names = {line.strip() for line in (listed.stdout + "\n" + listed.stderr).splitlines()[1:]}
    return tuple(language for language in LANGUAGES if language in names)


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
    """A line worth saying: two letters or digits at least (a lone symbol is noise), or one CJK character."""
    letters = _LETTER.findall(text)
    return len(letters) >= 2 or any(_is_cjk(c) for c in letters)


def parse_tsv(tsv: str, scale: float = 1.0) -> tuple[Line, ...]:
    """Tesseract's TSV output as lines (confident words only), boxes scaled back by ``1 / scale``."""
    grouped: dict[tuple[str, str, str], list[tuple[str, float, int, int, int, int]]] = {}
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
    for words in grouped.values():
        text = join_words([w[0] for w in words])
        mean = sum(w[1] for w in words) / len(words)
        if mean < MIN_LINE_CONFIDENCE or not _meaningful(text):
            continue
        x0, y0 = min(w[2] for w in words), min(w[3] for w in words)
        x1, y1 = max(w[2] + w[4] for w in words), max(w[3] + w[5] for w in words)
        box = (round(x0 / scale), round(y0 / scale), round((x1 - x0) / scale), round((y1 - y0) / scale))
        lines.append(Line(text=text, box=box, confidence=round(mean, 1)))
    return tuple(sorted(lines, key=lambda line: (line.box[1], line.box[0])))


def read_text(frame_bgr: Image, timeout_s: float = TIMEOUT_S) -> Reading:
    """The text in ``frame_bgr`` (blocking: up to ``timeout_s``; call it from an executor thread)."""
    problem = ocr_problem()
    languages = installed_languages()
    if problem is not None or not languages:
        return Reading(problem=problem)
    gray = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY) if frame_bgr.ndim == 3 else frame_bgr
    scale = min(1.0, MAX_WIDTH / gray.shape[1])
    if scale < 1.0:
        gray = cv2.resize(gray, (round(gray.shape[1] * scale), round(gray.shape[0] * scale)),
                          interpolation=cv2.INTER_AREA)
    ok, png = cv2.imencode(".png", gray)
    if not ok:
        return Reading(problem="the picture could not be handed to OCR")
    # --psm 3: find the blocks of text anywhere in the picture (a sheet held up, a screen, a label).
    command = [TESSERACT, "stdin", "stdout", "-l", "+".join(languages), "--psm", "3", "tsv"]
    try:
        done = subprocess.run(command, input=png.tobytes(), capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return Reading(problem=f"reading the text took longer than {timeout_s:g} s")
    except OSError as err:
        return Reading(problem=f"OCR could not run: {err.strerror or err}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return Reading(problem=f"OCR failed: {said[-1] if said else f'exit code {done.returncode}'}")
    return Reading(lines=parse_tsv(done.stdout.decode("utf-8", "replace"), scale))
