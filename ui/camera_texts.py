"""The words of the camera preview, in English and Japanese (the language setting picks).

The camera adapter says why there is no camera in English (``DeviceStatus.reason``, e.g. ``"no camera: cannot
open '0'"``); :func:`reason_text` says the known reasons in the user's language and shows any other one as it is.
"""

from __future__ import annotations

import re
from typing import Final

TEXTS: Final[dict[str, tuple[str, str]]] = {  # key: (en, ja)
    "title": ("Camera", "カメラ"),
    "indicator.on": ("Camera on", "カメラ使用中"),
    "indicator.tooltip": ("The camera is on: the companions can look through it",
                          "カメラが動いています。コンパニオンはこのカメラで見ることができます"),
    "state.live": ("Live preview", "ライブプレビュー"),
    "state.waiting": ("Waiting for the camera…", "カメラの映像を待っています…"),
    "state.off": ("No camera", "カメラを使えません"),
    "state.error": ("The preview failed", "プレビューを表示できません"),
    "looked": ("{who} looked", "{who}が見ました"),
    "looked.accessible": ("{who} looked through the camera", "{who}がカメラで見ました"),
}

NO_DEVICES: Final = "no camera: the devices are not running"  # the runtime has not started them (yet)
UNREADABLE_FRAME: Final = "a preview frame could not be decoded"

# The adapter's reasons (app/devices/camera.py) in Japanese; the groups are carried over as they are.
_REASONS_JA: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(r"not started"), "まだ起動していません"),
    (re.compile(r"turned off in the settings"), "設定でオフになっています"),
    (re.compile(r"no video device (?P<x>.+)"), "ビデオデバイス {x} がありません"),
    (re.compile(r"no such device or video file (?P<x>.+)"), "デバイスまたは動画ファイル {x} が見つかりません"),
    (re.compile(r"cannot open (?P<x>.+)"), "{x} を開けません"),
    (re.compile(r"the source stopped delivering frames"), "映像が届かなくなりました"),
    (re.compile(r"no frame within (?P<x>.+) s"), "{x} 秒以内に映像が届きませんでした"),
    (re.compile(r"the devices are not running"), "デバイスが動いていません"),
    (re.compile(r"a preview frame could not be decoded"), "プレビューの映像を読み取れませんでした"),
)
_PREFIX: Final = re.compile(r"^\s*no camera\s*:\s*", re.IGNORECASE)


def camera_text(key: str, language: str, **values: object) -> str:
    en, ja = TEXTS[key]
    text = ja if language == "ja" else en
    return text.format(**values) if values else text


def reason_text(reason: str, language: str) -> str:
    """The detail under "No camera": the adapter's reason without its "no camera:" prefix, in ``language`` when
    it is a known one."""
    detail = _PREFIX.sub("", reason).strip()
    if language == "ja":
        for pattern, words in _REASONS_JA:
            match = pattern.fullmatch(detail)
            if match is not None:
                return words.format(**match.groupdict())
    return detail
