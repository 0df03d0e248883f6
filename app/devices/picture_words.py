"""What a camera picture shows, in the words a person would use, in the conversation's language (``ja`` or
English), from a :class:`VisionDescription` (app/devices/vision_description.py makes it): the text read and whether
it is on a sheet of paper, the things by colour, shape and place ("a round red thing like a ball in the middle",
「真ん中に赤いボールのような丸いもの」), the people, a dark room, and what changed since the last look.

No measurement figures; the words start by saying that they were made on the device and that no AI model looked at
the picture, so a companion never presents them as something it "saw". Pure Python: both languages are put into
words when the description is made, and again in the language of the words a user shows the picture with.
"""

from __future__ import annotations

from typing import Final

from app.devices.faces import face_detection_problem
from app.devices.ocr import NOT_INSTALLED, TOO_SLOW
from companions.devices.query_bodies import SeenThing, VisionDescription

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
