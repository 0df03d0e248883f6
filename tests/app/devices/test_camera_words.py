"""What the camera shows, in the user's words (app/devices/vision_description.py, ocr.py, picture_things.py): real
pictures made here, read by the real Tesseract and OpenCV, said in Japanese and English."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.devices import ocr
from app.devices.camera_controls import shown_message
from app.devices.ocr import read_text
from app.devices.vision_description import describe_frame, face_detection_problem, in_words
from companions.companion.lines import detect_language
from companions.devices.query_bodies import VisionDescription, VisionPicture
from tests.app.devices.pictures import (
    BLUE,
    RED,
    YELLOW,
    as_a_webcam_sees_it,
    hello_madoi_with_a_red_ball,
    paper_with_words,
    qt_text_picture,
    room,
    shaded_ball,
    with_faces,
)

needs_ocr = pytest.mark.skipif(ocr.ocr_problem() is not None, reason=f"no OCR here: {ocr.ocr_problem()}")
needs_faces = pytest.mark.skipif(face_detection_problem() is not None, reason=f"{face_detection_problem()}")
JARGON = re.compile(r"\d+\s*%|/255|faces? detected|brightness|dominant|motion")


@needs_ocr
def test_a_japanese_user_is_told_the_paper_says_hello_madoi_and_a_red_ball_is_in_the_middle() -> None:
    description, _ = describe_frame(hello_madoi_with_a_red_ball())
    assert description.text == ("HELLO MADOI",)
    assert description.text_on_paper
    assert description.faces == 0
    japanese = in_words(description, "ja")
    assert "白い紙に「HELLO MADOI」と書いてあります" in japanese
    assert "真ん中に赤いボールのような丸いものがあります" in japanese
    assert "人は映っていません" in japanese
    assert not JARGON.search(japanese), japanese
    assert description.in_language("ja") == japanese  # what a look in a Japanese conversation reads
    shown = shown_message("見える？", japanese, "ja")
    assert detect_language(shown) == "ja"


@needs_ocr
def test_the_same_is_told_of_a_shaded_ball_and_a_sheet_in_a_dim_noisy_webcam_picture() -> None:
    image = paper_with_words(room(), "HELLO MADOI")
    shaded_ball(image, (320, 300), 60)
    seen = as_a_webcam_sees_it(image, light=0.7)
    description, _ = describe_frame(seen)
    japanese = in_words(description, "ja")
    assert "白い紙に「HELLO MADOI」と書いてあります" in japanese  # the sheet is grey in the dim room: still paper
    assert "真ん中に赤いボールのような丸いもの" in japanese  # its dark side is not a brown thing
    assert [t.colour for t in description.things] == ["red"]


@needs_ocr
def test_an_english_user_is_told_the_same_in_english() -> None:
    description, _ = describe_frame(hello_madoi_with_a_red_ball())
    english = in_words(description, "en")
    assert 'A white sheet of paper says "HELLO MADOI".' in english
    assert "a round red thing like a ball in the middle" in english
    assert "No one is in view." in english
    assert not JARGON.search(english), english
    assert description.summary == english
    assert detect_language(english) == "en"


@needs_ocr
@pytest.mark.parametrize("pixel_size", [24, 32, 48])
def test_japanese_and_english_text_of_24_px_and_more_is_read(qapp: object, pixel_size: int) -> None:
    picture = qt_text_picture(["今日は晴れです", "こんにちは、マドイです", "Good morning"], pixel_size)
    reading = read_text(picture)
    assert reading.problem is None
    assert reading.texts == ("今日は晴れです", "こんにちは、マドイです", "Good morning")
    description, _ = describe_frame(picture)
    assert "「今日は晴れです」「こんにちは、マドイです」「Good morning」" in in_words(description, "ja")


@needs_ocr
def test_text_not_on_paper_is_said_as_words_in_the_picture() -> None:
    image = room(colour=(200, 200, 200))
    cv2.putText(image, "EXIT 42", (200, 250), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (20, 20, 20), 3)
    description, _ = describe_frame(image)
    assert description.text == ("EXIT 42",)
    assert not description.text_on_paper
    assert "「EXIT 42」という文字が見えます" in in_words(description, "ja")
    assert 'Written in the picture: "EXIT 42".' in in_words(description, "en")


@needs_ocr
@needs_faces
def test_a_short_label_beside_a_person_is_read_too() -> None:
    # Tesseract's layout analysis alone reads nothing here (the face and the box take its attention): the likely
    # lines are read a second time on their own.
    image = with_faces(room(colour=(40, 90, 160)), [(480, 240)])
    cv2.rectangle(image, (60, 200), (180, 320), (255, 255, 255), thickness=-1)
    cv2.putText(image, "ROOM 7", (20, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.3, (0, 0, 0), 3)
    description, _ = describe_frame(image)
    assert description.text == ("ROOM 7",)
    assert description.faces == 1
    assert "「ROOM 7」という文字が見えます。" in in_words(description, "ja")
    assert "人が一人映っています。" in in_words(description, "ja")


def test_scattered_single_letters_and_symbols_are_not_said_as_text() -> None:
    tsv = "\t".join(["level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top", "width",
                     "height", "conf", "text"])
    rows = [("1", "E", 10), ("1", "ニ", 40), ("1", "a", 70), ("2", "©", 10), ("3", "今日", 10), ("3", "は", 60),
            ("4", "7", 10), ("4", "km", 40)]
    for line, word, left in rows:
        tsv += "\n" + "\t".join(["5", "1", "1", "1", line, "1", str(left), str(int(line) * 100), "25", "30", "95",
                                 word])
    assert [line.text for line in ocr.parse_tsv(tsv)] == ["今日は", "7 km"]


@needs_ocr
def test_a_noisy_picture_reads_as_no_text() -> None:
    noise = np.random.default_rng(7).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    blotches = cv2.GaussianBlur(noise, (0, 0), 3)
    for picture in (noise, blotches, hello_madoi_with_a_red_ball()[:, :, ::-1].copy() // 3):
        reading = read_text(np.asarray(picture, dtype=np.uint8))
        assert reading.problem is None
        assert all("HELLO" in line or "MADOI" in line for line in reading.texts), reading.texts


@needs_ocr
def test_a_page_of_text_is_cut_short_in_the_words_and_kept_whole_in_the_reading() -> None:
    image = room(width=900, height=700, colour=(245, 245, 245))
    lines = [f"LINE {n} OF A LONG PAGE OF TEXT" for n in range(1, 13)]
    for number, line in enumerate(lines):  # letters about 24 px high
        cv2.putText(image, line, (20, 45 + number * 54), cv2.FONT_HERSHEY_SIMPLEX, 1.1, (20, 20, 20), 2)
    description, _ = describe_frame(image)
    assert len(description.text) >= 9
    english = in_words(description, "en")
    assert '"LINE 1 OF A LONG PAGE OF TEXT"' in english
    assert " and more" in english
    assert "LINE 12" not in english
    assert "」など" in in_words(description, "ja")


def test_a_plain_room_reads_no_text_and_says_nothing_of_it() -> None:
    description, _ = describe_frame(room())
    assert description.text == ()
    assert description.things == ()
    assert in_words(description, "en").endswith(
        "(OpenCV, no AI model looked at the image): No one is in view. The background is mostly green. "
        "It is rather dark.")
    assert in_words(description, "ja").endswith("：人は映っていません。背景はほとんど緑です。少し暗いです。")


def test_things_are_said_by_colour_shape_and_place() -> None:
    image = room()
    cv2.rectangle(image, (30, 30), (130, 130), BLUE, thickness=-1)  # top left
    cv2.circle(image, (540, 400), 50, YELLOW, thickness=-1)  # bottom right
    cv2.rectangle(image, (305, 165), (335, 315), RED, thickness=-1)  # a long red thing in the middle
    description, _ = describe_frame(image, read=False)
    found = {(t.colour, t.shape, t.place) for t in description.things}
    assert found == {("blue", "square", "top left"), ("yellow", "round", "bottom right"), ("red", "long", "middle")}
    japanese = in_words(description, "ja")
    assert "左上に青くて四角いもの" in japanese
    assert "右下に黄色いボールのような丸いもの" in japanese
    assert "真ん中に赤くて細長いもの" in japanese
    english = in_words(description, "en")
    assert "a square blue thing at the top left" in english
    assert "a round yellow thing like a ball at the bottom right" in english


@needs_faces
@pytest.mark.parametrize(("centers", "english", "japanese"), [
    ([], "No one is in view.", "人は映っていません。"),
    ([(320, 240)], "One person is in view.", "人が一人映っています。"),
    ([(160, 240), (480, 240)], "2 people are in view.", "人が2人映っています。"),
])
def test_people_are_counted(centers: list[tuple[int, int]], english: str, japanese: str) -> None:
    description, _ = describe_frame(with_faces(room(colour=(120, 120, 120)), centers), read=False)
    assert description.faces == len(centers)
    assert english in in_words(description, "en")
    assert japanese in in_words(description, "ja")
    assert all(t.colour != "orange" for t in description.things)  # a face is a person, not an orange thing


@needs_ocr
def test_what_changed_since_the_last_look_is_said() -> None:
    first, previous = describe_frame(hello_madoi_with_a_red_ball())
    assert first.since_last is None
    assert "前に見たとき" not in in_words(first, "ja")

    same, previous = describe_frame(hello_madoi_with_a_red_ball(), previous)
    assert "前に見たときから変わっていません。" in in_words(same, "ja")
    assert "Nothing has changed since the last look." in in_words(same, "en")

    moved = paper_with_words(room(), "GOOD NIGHT")
    cv2.circle(moved, (100, 400), 60, RED, thickness=-1)
    changed, previous = describe_frame(moved, previous)
    japanese = in_words(changed, "ja")
    assert "「GOOD NIGHT」という文字が新しく見えます" in japanese
    assert "「HELLO MADOI」という文字は見えなくなりました" in japanese
    assert "赤いボールのような丸いものが左下に動きました" in japanese
    english = in_words(changed, "en")
    assert 'new text: "GOOD NIGHT"' in english
    assert "the round red thing like a ball moved to the bottom left" in english

    dark, _ = describe_frame((moved // 8).astype(np.uint8), previous)
    assert "暗くなりました" in in_words(dark, "ja")
    assert "it got darker" in in_words(dark, "en")


@needs_faces
def test_people_coming_and_going_since_the_last_look_is_said() -> None:
    grey = (120, 120, 120)
    _, previous = describe_frame(room(colour=grey), read=False)
    came, previous = describe_frame(with_faces(room(colour=grey), [(320, 240)]), previous, read=False)
    assert "前に見たときから、人が一人現れました。" in in_words(came, "ja")
    assert "Since the last look: someone came into view." in in_words(came, "en")
    two, previous = describe_frame(with_faces(room(colour=grey), [(160, 240), (480, 240)]), previous, read=False)
    assert "人が1人から2人になりました" in in_words(two, "ja")
    assert "2 people are in view now, 1 before" in in_words(two, "en")
    left, _ = describe_frame(room(colour=grey), previous, read=False)
    assert "人がいなくなりました" in in_words(left, "ja")
    assert "the people left" in in_words(left, "en")


def test_without_ocr_installed_it_says_so_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed = os.environ["PATH"]
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without tesseract-ocr
    description, _ = describe_frame(hello_madoi_with_a_red_ball())
    assert description.text == ()
    assert description.text_problem == ocr.NOT_INSTALLED
    assert "Text could not be read: no OCR is installed" in in_words(description, "en")
    assert "文字は読めません（文字を読む OCR がこのパソコンに入っていません）" in in_words(description, "ja")
    assert "真ん中に赤いボールのような丸いもの" in in_words(description, "ja")  # the rest is still told

    if shutil.which("tesseract", path=installed) is None:
        return  # no OCR on this machine at all
    monkeypatch.setenv("PATH", installed)  # the user installs it: the next look reads, without a restart
    again, _ = describe_frame(hello_madoi_with_a_red_ball())
    assert again.text == ("HELLO MADOI",)


@needs_ocr
def test_ocr_that_takes_too_long_is_given_up_and_said() -> None:
    picture = hello_madoi_with_a_red_ball()
    reading = read_text(picture, timeout_s=0.001)
    assert reading.texts == ()
    assert reading.problem == "reading the text took longer than 0.001 s"
    description = describe_frame(picture)[0].model_copy(update={"text": (), "text_problem": reading.problem})
    assert "文字は読めませんでした（読むのに時間がかかりすぎました）。" in in_words(description, "ja")
    assert "Text could not be read: reading the text took longer than 0.001 s." in in_words(description, "en")


def test_the_description_travels_on_the_wire_with_both_languages() -> None:
    description, _ = describe_frame(room(), read=False)
    picture = VisionPicture(image="x", description=description.summary, description_details=description)
    details = VisionPicture.read(picture.body()).description_details
    assert details is not None
    assert details.in_language("ja") == in_words(description, "ja")
    assert details.in_language("fr") == description.summary  # a language it was not put into: the English
    old = VisionDescription.model_validate({"source": "s", "faces": 1, "brightness": 1.0, "brightness_label": "dim",
                                            "motion": None, "motion_label": "", "colours": []})
    assert "text" not in old.model_dump()
    assert old.in_language("ja") == ""


def _madoi(*args: str) -> subprocess.CompletedProcess[str]:
    madoi = Path(sys.executable).parent / "madoi"
    return subprocess.run([str(madoi), *args], capture_output=True, text=True, timeout=120, check=False)


@needs_ocr
def test_the_command_prints_what_a_companion_is_told(tmp_path: Path, madoi_home: Path) -> None:
    picture = tmp_path / "hello.png"
    assert cv2.imwrite(str(picture), hello_madoi_with_a_red_ball())
    done = _madoi("camera", "describe", str(picture), "--json", "--language", "ja")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["text"] == ["HELLO MADOI"]
    assert said["people"] == 0
    assert said["language"] == "ja"
    assert said["summary"] == in_words(describe_frame(hello_madoi_with_a_red_ball())[0], "ja")
    assert "白い紙に「HELLO MADOI」と書いてあります" in said["summary"]

    english = _madoi("camera", "describe", str(picture), "--language", "en")
    assert english.stdout.startswith("On-device description")
    assert '"HELLO MADOI"' in english.stdout


def test_the_command_says_which_picture_it_could_not_read(tmp_path: Path, madoi_home: Path) -> None:
    not_a_picture = tmp_path / "notes.png"
    not_a_picture.write_text("hello")
    done = _madoi("camera", "describe", str(tmp_path / "missing.png"), str(not_a_picture), "--json")
    assert done.returncode == 1
    assert "missing.png: no such file" in done.stderr
    assert "notes.png: not a picture OpenCV can read" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
