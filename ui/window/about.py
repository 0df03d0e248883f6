"""The About box: what Madoi is and whose work it speaks with (the credits a licence asks for).

Open JTalk's voice "Mei" is CC BY 3.0: its authors are named here and in the README (app/devices/openjtalk_voice.py
voices the Japanese lines with it). Kokoro-82M (downloaded only when the user asks: app/devices/kokoro_files.py) is
Apache-2.0 and its ONNX export MIT: named here too, with misaki, whose kana table reads Japanese for it.
"""

from __future__ import annotations

import html
from typing import Final

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QWidget

from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

_TEXTS: Final = Texts("about", {
    "action": QT_TRANSLATE_NOOP("about", "&About Madoi"),
    "title": QT_TRANSLATE_NOOP("about", "About Madoi"),
    "body": QT_TRANSLATE_NOOP("about", "Madoi: AI companions who talk with you and with each other, on your computer."),
    "voices": QT_TRANSLATE_NOOP("about", "Voices"),
    "mei": QT_TRANSLATE_NOOP(
        "about", 'Japanese voice: HTS Voice "Mei", Copyright (c) 2009-2013 Nagoya Institute of Technology, Department '
                 "of Computer Science; released by the MMDAgent Project Team; licensed under {licence}. Spoken through "
                 "Open JTalk (pyopenjtalk-plus, MIT licence)."),
    "kokoro": QT_TRANSLATE_NOOP(
        "about", "Neural voice, once downloaded: Kokoro-82M by hexgrad (Apache-2.0), its ONNX export by thewh1teagle "
                 "(kokoro-onnx, MIT licence); Japanese read for it with misaki's kana table (hexgrad, Apache-2.0)."),
    "system": QT_TRANSLATE_NOOP("about", "Other languages: the system's voices (espeak-ng, SAPI5 or "
                                         "NSSpeechSynthesizer) through pyttsx3."),
    "whisper": QT_TRANSLATE_NOOP(
        "about", "Hearing, once downloaded: Whisper base by OpenAI (MIT licence), converted for CTranslate2 by SYSTRAN "
                 "(faster-whisper, MIT licence)."),
})
MEI_LICENCE_URL: Final = "https://creativecommons.org/licenses/by/3.0/"


def about_text() -> str:
    """The About box's rich text, in the interface's language (the credits keep their names as written)."""
    licence = f'<a href="{MEI_LICENCE_URL}">Creative Commons Attribution 3.0 (CC BY 3.0)</a>'
    return (f"<p>{html.escape(_TEXTS.text('body'), quote=False)}</p>"
            f"<p><b>{html.escape(_TEXTS.text('voices'), quote=False)}</b></p>"
            f"<p>{html.escape(_TEXTS.text('mei'), quote=False).format(licence=licence)}</p>"
            f"<p>{html.escape(_TEXTS.text('kokoro'), quote=False)}</p>"
            f"<p>{html.escape(_TEXTS.text('system'), quote=False)}</p>"
            f"<p>{html.escape(_TEXTS.text('whisper'), quote=False)}</p>")


def show_about(parent: QWidget | None) -> None:
    QMessageBox.about(parent, _TEXTS.text("title"), about_text())


def about_action_text() -> str:
    """The menu entry's words, in the interface's language."""
    return _TEXTS.text("action")


def about_action(window: QWidget) -> QAction:
    """The menu's "About Madoi", which opens the box."""
    action = named(QAction(about_action_text(), window), "aboutAction")
    action.triggered.connect(lambda: show_about(window))
    return action
