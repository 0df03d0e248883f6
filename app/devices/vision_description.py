"""What the camera shows, in the user's words: an on-device description of a camera frame (no model looks at it).

Used for a look by a model that takes no images, and for "Show them" (a model that takes images still gets the
picture itself). It tells what a person would: the text in the picture (read by Tesseract: app/devices/ocr.py),
and whether it is on a white sheet of paper; how many people are in view (faces, with the Haar cascade OpenCV
ships); the notable things by colour, shape and place ("a round red thing like a ball in the middle":
app/devices/picture_things.py); a dark room; and what changed since the last look. :func:`in_words` says it in
the conversation's language (``ja`` or English), with no measurement figures, and says that it was made on the
device, so a companion never presents it as something it "saw". The measurements (brightness, motion, main
colours) stay in the description's fields for the programs that read them.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Final, cast

import cv2
import numpy as np
import numpy.typing as npt

from app.devices.ocr import NOT_INSTALLED, TOO_SLOW, Reading, read_text
from app.devices.picture_things import Box, find_things, sheet_under
from companions.devices.query_bodies import Colour, SeenThing, SinceLastLook, VisionDescription

SOURCE_LABEL: Final = "on-device description: OpenCV and Tesseract OCR (no AI model looked at the image)"
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


def face_boxes(gray: Image) -> list[Box] | None:
    """The frontal faces OpenCV's Haar cascade finds in ``gray`` (x, y, width, height in its pixels), or None when
    this OpenCV build has no cascade."""
    if face_detection_problem() is not None:
        return None
    with _cascade_lock:
        faces = _face_cascade().detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5, minSize=(24, 24))
    return [(int(x), int(y), int(w), int(h)) for x, y, w, h in faces]


def count_faces(gray: Image) -> int | None:
    """Frontal faces found by OpenCV's Haar cascade, or None when this OpenCV build has none."""
    boxes = face_boxes(gray)
    return None if boxes is None else len(boxes)


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


# -- the words -------------------------------------------------------------------------------------------------

# Colour words in Japanese: the noun, the form before another adjective (赤くて丸い) and before a noun (赤いもの).
_JA_COLOURS: Final = {
    "red": ("赤", "赤くて", "赤い"), "blue": ("青", "青くて", "青い"), "white": ("白", "白くて", "白い"),
    "black": ("黒", "黒くて", "黒い"), "yellow": ("黄色", "黄色くて", "黄色い"),
    "brown": ("茶色", "茶色くて", "茶色い"),
    "green": ("緑", "緑で", "緑の"), "orange": ("オレンジ", "オレンジ色で", "オレンジ色の"),
    "purple": ("紫", "紫で", "紫の"), "pink": ("ピンク", "ピンクで", "ピンクの"), "cyan": ("水色", "水色で", "水色の"),
    "gray": ("灰色", "灰色で", "灰色の"),
}
MAX_SAID_CHARS: Final = 240  # of the text read, said in the words (a page of a book is not read out)
_JA_SHAPES: Final = {"round": "丸い", "square": "四角い", "rectangle": "四角い", "long": "細長い"}
_EN_SHAPES: Final = {"round": "round", "square": "square", "rectangle": "rectangular", "long": "long"}
_JA_PLACES: Final = {
    "middle": "真ん中", "top": "上のほう", "bottom": "下のほう", "left": "左側", "right": "右側",
    "top left": "左上", "top right": "右上", "bottom left": "左下", "bottom right": "右下",
}
_EN_PLACES: Final = {
    "middle": "in the middle", "top": "at the top", "bottom": "at the bottom", "left": "on the left",
    "right": "on the right", "top left": "at the top left", "top right": "at the top right",
    "bottom left": "at the bottom left", "bottom right": "at the bottom right",
}
_PREFIX: Final = {
    "en": "On-device description (OpenCV, no AI model looked at the image): ",
    "ja": "端末上の説明（AI モデルは画像を見ていません）：",
}


def _ja_colour(name: str) -> tuple[str, str, str]:
    return _JA_COLOURS.get(name, (name, f"{name}で", f"{name}の"))


def thing_words(thing: SeenThing, language: str) -> str:
    """``thing`` as a person names it, without its place: "a round red thing like a ball" (in Japanese
    「赤いボールのような丸いもの」)."""
    if language == "ja":
        _, joined, before_noun = _ja_colour(thing.colour)
        if thing.shape == "round":
            return f"{before_noun}ボールのような丸いもの"
        if thing.shape in _JA_SHAPES:
            return f"{joined}{_JA_SHAPES[thing.shape]}もの"
        return f"{before_noun}もの"
    if thing.shape == "round":
        return f"a round {thing.colour} thing like a ball"
    if thing.shape in _EN_SHAPES:
        return f"a {_EN_SHAPES[thing.shape]} {thing.colour} thing"
    return f"a {thing.colour} thing"


def _the(words: str) -> str:
    return "the " + words.removeprefix("a ")


def _quoted(texts: tuple[str, ...], language: str) -> str:
    """The lines read, quoted; a page of text is cut after :data:`MAX_SAID_CHARS` (the JSON keeps every line)."""
    kept: list[str] = []
    for text in texts:
        if kept and sum(len(t) for t in kept) + len(text) > MAX_SAID_CHARS:
            break
        kept.append(text)
    more = len(kept) < len(texts)
    if language == "ja":
        return "".join(f"「{t}」" for t in kept) + ("など" if more else "")
    return ", ".join(f'"{t}"' for t in kept) + (" and more" if more else "")


def _text_sentence(description: VisionDescription, language: str) -> str:
    texts, problem = description.text, description.text_problem
    if language == "ja":
        if texts:
            return (f"白い紙に{_quoted(texts, 'ja')}と書いてあります。" if description.text_on_paper
                    else f"{_quoted(texts, 'ja')}という文字が見えます。")
        if problem == NOT_INSTALLED:
            return "文字は読めません（文字を読む OCR がこのパソコンに入っていません）。"
        if problem and problem.startswith(TOO_SLOW):
            return "文字は読めませんでした（読むのに時間がかかりすぎました）。"
        if problem:
            return "文字は読めませんでした（文字を読む OCR がうまく動きませんでした）。"
        return ""
    if texts:
        return (f"A white sheet of paper says {_quoted(texts, 'en')}." if description.text_on_paper
                else f"Written in the picture: {_quoted(texts, 'en')}.")
    if problem:
        return f"Text could not be read: {problem}."
    return ""


def _people_sentence(faces: int | None, language: str) -> str:
    if language == "ja":
        if faces is None:
            return "人の数は数えられません（この OpenCV には顔を見つける仕組みがありません）。"
        if faces == 0:
            return "人は映っていません。"
        return "人が一人映っています。" if faces == 1 else f"人が{faces}人映っています。"
    if faces is None:
        return f"People could not be counted ({face_detection_problem()})."
    return "No one is in view." if faces == 0 else "One person is in view." if faces == 1 else \
        f"{faces} people are in view."


def _things_sentence(things: tuple[SeenThing, ...], language: str) -> str:
    if not things:
        return ""
    if language == "ja":
        return "、".join(f"{_JA_PLACES.get(t.place, t.place)}に{thing_words(t, 'ja')}" for t in things) + "があります。"
    parts = [f"{thing_words(t, 'en')} {_EN_PLACES.get(t.place, t.place)}" for t in things]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"There is {listed}."


def _scene_sentence(description: VisionDescription, language: str) -> str:
    """The background's colour when one covers most of the picture, and a dark picture."""
    out = []
    main = description.colours[0] if description.colours else None
    if main is not None and main.share >= 0.5 and description.brightness_label not in ("dark",):
        out.append(f"背景はほとんど{_ja_colour(main.name)[0]}です。" if language == "ja"
                   else f"The background is mostly {main.name}.")
    if description.brightness_label == "dark":
        out.append("とても暗くて、よく見えません。" if language == "ja" else "It is very dark; little can be made out.")
    elif description.brightness_label == "dim":
        out.append("少し暗いです。" if language == "ja" else "It is rather dark.")
    return "".join(out) if language == "ja" else " ".join(out)


def _people_change_ja(before: int, now: int) -> str:
    if before == 0:
        return "人が一人現れました" if now == 1 else f"人が{now}人現れました"
    if now == 0:
        return "人がいなくなりました"
    return f"人が{before}人から{now}人になりました"


def _people_change_en(before: int, now: int) -> str:
    if before == 0:
        return "someone came into view" if now == 1 else f"{now} people came into view"
    if now == 0:
        return "the person left" if before == 1 else "the people left"
    if now == 1:
        return f"one person is in view now, {before} before"
    return f"{now} people are in view now, {before} before"


def _change_sentence(description: VisionDescription, language: str) -> str:
    change = description.since_last
    if change is None:
        return ""  # the first look
    ja = language == "ja"
    said: list[str] = []
    before, now = change.people_before, description.faces
    if before is not None and now is not None and before != now:
        said.append(_people_change_ja(before, now) if ja else _people_change_en(before, now))
    if change.text_new:
        said.append(f"{_quoted(change.text_new, 'ja')}という文字が新しく見えます" if ja
                    else f"new text: {_quoted(change.text_new, 'en')}")
    if change.text_gone:
        said.append(f"{_quoted(change.text_gone, 'ja')}という文字は見えなくなりました" if ja
                    else f"{_quoted(change.text_gone, 'en')} can no longer be read")
    for thing in change.things_new:
        said.append(f"{thing_words(thing, 'ja')}が現れました" if ja else f"{thing_words(thing, 'en')} appeared")
    for thing in change.things_gone:
        said.append(f"{thing_words(thing, 'ja')}がなくなりました" if ja
                    else f"{_the(thing_words(thing, 'en'))} is gone")
    for thing in change.things_moved:
        said.append(f"{thing_words(thing, 'ja')}が{_JA_PLACES.get(thing.place, thing.place)}に動きました" if ja
                    else f"{_the(thing_words(thing, 'en'))} moved to the {thing.place}")
    if change.light:
        said.append(("暗くなりました" if change.light == "darker" else "明るくなりました") if ja
                    else f"it got {change.light}")
    if said:
        return "前に見たときから、" + "。".join(said) + "。" if ja else "Since the last look: " + "; ".join(said) + "."
    if description.motion_label == "none":
        return "前に見たときから変わっていません。" if ja else "Nothing has changed since the last look."
    if description.motion_label == "a lot":
        return "前に見たときから大きく変わりました。" if ja else "Much of the picture changed since the last look."
    if description.motion_label in ("some", "a little"):
        return "前に見たときから少し動きがありました。" if ja else "A little moved since the last look."
    return ""


def in_words(description: VisionDescription, language: str) -> str:
    """What ``description`` (from :func:`describe_frame`) tells, in plain words of ``language`` ("ja" or English),
    saying that it was made on the device and that no AI model looked at the picture."""
    lang = "ja" if language == "ja" else "en"
    sentences = [_text_sentence(description, lang), _things_sentence(description.things, lang),
                 _people_sentence(description.faces, lang), _scene_sentence(description, lang),
                 _change_sentence(description, lang)]
    joiner = "" if lang == "ja" else " "
    return _PREFIX[lang] + joiner.join(s for s in sentences if s)
