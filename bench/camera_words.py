"""What the camera shows, in words: OCR word accuracy on generated text of 24 px and more, and people counted.

- **OCR word accuracy**: English and Japanese lines drawn by Qt (Noto Sans CJK) at 24, 32 and 48 px, on a white
  sheet held in a noisy room, JPEG-compressed as the camera does (quality 80), some tilted 3 degrees. A word is read
  when it is among the words read (English) or in the text read (Japanese, written without spaces). Baseline in
  the same run: Tesseract's own layout analysis alone (one ``--psm 3`` run), which Madoi's reading
  (app/devices/ocr.py) follows with a second reading of the lines it missed. Also: words read that were not there.
- **People counted**: drawn faces (0 to 3, the Haar cascade OpenCV ships) in a noisy room; a picture counts when the
  number is exact.
- The time per reading (median), next to the baseline's.

Run: ``QT_QPA_PLATFORM=offscreen python bench/camera_words.py``.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter

import _report  # noqa: F401 - puts the repo on sys.path
import cv2
import numpy as np
from _report import report

from app.devices import ocr
from app.devices.vision_description import describe_frame
from tests.app.devices.pictures import NOTO_CJK
from tests.app.media import draw_face

ENGLISH = ["HELLO MADOI", "Good morning everyone", "The meeting starts at ten", "Buy milk and bread",
           "Happy birthday Akari"]
JAPANESE = [["今日", "は", "晴れ", "です"], ["こんにちは", "マドイ", "です"], ["牛乳", "と", "パン", "を", "買う"],
            ["会議", "は", "十時", "から"], ["お誕生日", "おめでとう"]]
SIZES = (24, 32, 48)


def qt_lines(lines: list[str], pixel_size: int) -> np.ndarray:
    """``lines`` in black on white by Qt (Noto Sans CJK), as a BGR image just large enough."""
    from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QImage, QPainter

    families = QFontDatabase.applicationFontFamilies(QFontDatabase.addApplicationFont(str(NOTO_CJK)))
    font = QFont(families[0])
    font.setPixelSize(pixel_size)
    metrics = QFontMetrics(font)
    width = max(metrics.horizontalAdvance(line) for line in lines) + 2 * pixel_size
    height = len(lines) * pixel_size * 2 + pixel_size
    picture = QImage(width, height, QImage.Format.Format_RGB888)
    picture.fill(QColor(245, 245, 245))
    painter = QPainter(picture)
    painter.setFont(font)
    painter.setPen(QColor(15, 15, 15))
    for number, line in enumerate(lines):
        painter.drawText(pixel_size, pixel_size + metrics.ascent() + number * pixel_size * 2, line)
    painter.end()
    rows = np.frombuffer(picture.constBits(), dtype=np.uint8).reshape(height, picture.bytesPerLine())
    return cv2.cvtColor(rows[:, : width * 3].reshape(height, width, 3), cv2.COLOR_RGB2BGR)


def in_a_room(sheet: np.ndarray, rng: np.random.Generator, tilt: float) -> np.ndarray:
    """``sheet`` held up in a noisy 640x480 (or larger) room, tilted by ``tilt`` degrees, JPEG quality 80."""
    height, width = max(480, sheet.shape[0] + 80), max(640, sheet.shape[1] + 80)
    room = np.full((height, width, 3), (70, 100, 130), dtype=np.int16)
    room += rng.integers(-25, 25, room.shape, dtype=np.int16)
    y, x = (height - sheet.shape[0]) // 2, (width - sheet.shape[1]) // 2
    room[y:y + sheet.shape[0], x:x + sheet.shape[1]] = sheet
    image = np.clip(room, 0, 255).astype(np.uint8)
    if tilt:
        turn = cv2.getRotationMatrix2D((width / 2, height / 2), tilt, 1.0)
        image = cv2.warpAffine(image, turn, (width, height), borderMode=cv2.BORDER_REPLICATE)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert ok
    return cv2.imdecode(jpeg, cv2.IMREAD_COLOR)


def layout_only(image: np.ndarray) -> tuple[str, ...]:
    """The baseline: Tesseract's layout analysis alone, one run (the first of Madoi's readings)."""
    languages = ocr.installed_languages() or ()
    gray = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
    tsv = ocr._run(gray, languages, "3", ocr.TIMEOUT_S)
    return () if isinstance(tsv, ocr.Reading) else tuple(line.text for line in ocr.parse_tsv(tsv))


def score(expected: list[list[str]], english: bool, read: tuple[str, ...]) -> tuple[int, int, int]:
    """(words read, words expected, words read that were not there)."""
    if english:
        tokens = [token for line in read for token in line.split()]
        wanted = [word for line in expected for word in line]
        found = 0
        for word in wanted:
            if word in tokens:
                tokens.remove(word)
                found += 1
        return found, len(wanted), len(tokens)
    text = "".join(read).replace(" ", "")
    wanted = [word for line in expected for word in line]
    found = sum(1 for word in wanted if word in text)
    extra = Counter(text) - Counter("".join(wanted))  # characters read that were not written
    return found, len(wanted), sum(extra.values())


def ocr_figures() -> None:
    rng = np.random.default_rng(11)
    totals = {"madoi": [0, 0, 0], "layout only": [0, 0, 0]}
    times: dict[str, list[float]] = {"madoi": [], "layout only": []}
    by_size: dict[int, list[int]] = {size: [0, 0] for size in SIZES}
    for size in SIZES:
        for english in (True, False):
            for tilt in (0.0, 3.0):
                for start in range(0, 5, 2):  # two or three lines a sheet
                    if english:
                        expected = [line.split() for line in ENGLISH[start:start + 2]]
                        lines = ENGLISH[start:start + 2]
                    else:
                        expected = JAPANESE[start:start + 2]
                        lines = ["".join(words) for words in expected]
                    image = in_a_room(qt_lines(lines, size), rng, tilt)
                    for name, read in (("madoi", lambda i: ocr.read_text(i).texts), ("layout only", layout_only)):
                        began = time.perf_counter()
                        texts = read(image)
                        times[name].append(time.perf_counter() - began)
                        found, wanted, extra = score(expected, english, texts)
                        totals[name][0] += found
                        totals[name][1] += wanted
                        totals[name][2] += extra
                        if name == "madoi":
                            by_size[size][0] += found
                            by_size[size][1] += wanted
    madoi, layout = totals["madoi"], totals["layout only"]
    report("OCR word accuracy, text of 24-48 px", 100 * madoi[0] / madoi[1], "%",
           "Tesseract layout analysis alone", 100 * layout[0] / layout[1])
    for size, (found, wanted) in by_size.items():
        report(f"OCR word accuracy at {size} px", 100 * found / wanted, "%")
    report("words read that were not there (English tokens, Japanese characters)", madoi[2], "",
           "Tesseract layout analysis alone", layout[2])
    report("time per reading (median)", 1000 * statistics.median(times["madoi"]), "ms",
           "Tesseract layout analysis alone", 1000 * statistics.median(times["layout only"]))


def people_figures() -> None:
    rng = np.random.default_rng(5)
    right = total = 0
    counted: list[str] = []
    for people in (0, 1, 2, 3):
        for _ in range(3):
            room = np.full((480, 640, 3), (120, 120, 120), dtype=np.int16)
            room += rng.integers(-20, 20, room.shape, dtype=np.int16)
            image = np.clip(room, 0, 255).astype(np.uint8)
            for number in range(people):
                draw_face(image, (110 + number * 210 + int(rng.integers(-20, 20)), 240 + int(rng.integers(-40, 40))))
            description, _ = describe_frame(image, read=False)
            right += description.faces == people
            total += 1
            counted.append(f"{people}->{description.faces}")
    report("people counted exactly (drawn faces 0-3, noisy room)", 100 * right / total, f"% of {total} pictures")
    print("  counts (drawn -> counted): " + " ".join(counted), flush=True)


def main() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication([])
    if ocr.ocr_problem() is not None:
        print(f"no OCR here: {ocr.ocr_problem()}")
    else:
        ocr_figures()
    people_figures()
    del app


if __name__ == "__main__":
    main()
