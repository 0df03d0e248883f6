"""The Camera and voice tab's neural voice: Kokoro-82M offered as a download (its size and licences said before
anything is fetched), downloading (progress, cancel: it continues from there next time), then ready (its voices,
each with a test through the app's speaker).

The download is app/devices/kokoro_files.py's (the app's downloader: free space, resume, sha256). The button is the
consent: it says the size, and the text above it the licences. Once the files are in place the running speaker
offers Kokoro's voices to each companion (the Companions tab lists them: :attr:`KokoroBox.ready`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.devices.kokoro_files import (
    EXPORT_LICENCE,
    KOKORO_FILES,
    KokoroFiles,
    download_kokoro,
    kokoro_installed,
    kokoro_offers,
)
from app.devices.kokoro_voice import JAPANESE_VOICES, voice_name
from app.downloads import DownloadCancelled, DownloadError, DownloadProgress
from companions.common.languages import Language
from ui.settings.form import Spawn, show_result, voice_test
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

TEXTS: Final = Texts("kokoro_voice", {
    "title": QT_TRANSLATE_NOOP("kokoro_voice", "Neural voice (Kokoro)"),
    "about": QT_TRANSLATE_NOOP(
        "kokoro_voice", "Kokoro-82M: natural Japanese voices that run on this computer. A {size} MB download from "
                        "the kokoro-onnx project's release; licence {licence} (the model and its voices, by hexgrad), "
                        "{export} (the ONNX export)."),
    "missing": QT_TRANSLATE_NOOP(
        "kokoro_voice", "Not downloaded. Until it is, a companion given a Kokoro voice speaks in the default voice "
                        "(Open JTalk for Japanese)."),
    "download": QT_TRANSLATE_NOOP("kokoro_voice", "Download Kokoro ({size} MB)"),
    "asking": QT_TRANSLATE_NOOP("kokoro_voice", "Asking the host about the files…"),
    "progress": QT_TRANSLATE_NOOP("kokoro_voice", "Downloading: {done} of {total} MB"),
    "cancel": QT_TRANSLATE_NOOP("kokoro_voice", "Cancel download"),
    "cancelled": QT_TRANSLATE_NOOP("kokoro_voice", "Cancelled. The download continues from there next time."),
    "failed": QT_TRANSLATE_NOOP("kokoro_voice", "Not downloaded: {problem}"),
    "ready": QT_TRANSLATE_NOOP(
        "kokoro_voice", "Downloaded: {count} Japanese voices. Choose one for each companion in the Companions tab "
                        "(English lines stay with the system voice)."),
    "test": QT_TRANSLATE_NOOP("kokoro_voice", "Test"),
    "no_speaker": QT_TRANSLATE_NOOP("kokoro_voice", "The test needs Madoi running."),
})

SAMPLE: Final = "こんにちは。円居の声のテストです。"  # Kokoro speaks Japanese here, whatever the window says
Sayer = Callable[[str, str], Awaitable[None]]  # (voice id, sentence): said by the app's speaker


def _mb(size: int) -> int:
    return round(size / 1_000_000)


class KokoroBox(QWidget):
    """Kokoro offered, downloading or ready, for the files under ``data_dir``."""

    ready = Signal(list)  # the voice ids offered once downloaded
    finished = Signal(bool)  # a download ended: in place, or not (cancelled, failed)
    tested = Signal(bool, str)  # heard, message

    def __init__(self, data_dir: Path, *, language: Language, spawn: Spawn, files: KokoroFiles = KOKORO_FILES,
                 say: Sayer | None = None) -> None:
        super().__init__()
        named(self, "kokoroVoice")
        self.language, self.data_dir, self.files, self.say = language, data_dir, files, say
        self._spawn = spawn
        self._cancel: asyncio.Event | None = None
        self.about = named(QLabel(self.t("about", size=_mb(files.size), licence=files.model.licence,
                                         export=EXPORT_LICENCE)), "fieldHint")
        self.about.setWordWrap(True)
        self.status = named(QLabel(""), "kokoroStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.progress = named(QProgressBar(), "kokoroProgress")
        self.progress.setRange(0, 1000)
        self.download_button = named(QPushButton(self.t("download", size=_mb(files.size))), "downloadKokoroButton")
        self.download_button.clicked.connect(self.download)
        self.cancel_button = named(QPushButton(self.t("cancel")), "cancelKokoroButton")
        self.cancel_button.clicked.connect(self.cancel)
        for button in (self.download_button, self.cancel_button):  # a button's width, not the row's
            button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.voice = named(QComboBox(), "kokoroVoiceCombo")
        for name in JAPANESE_VOICES:
            self.voice.addItem(voice_name(name), f"kokoro:{name}")
        self.test_button = named(QPushButton(self.t("test")), "testKokoroButton")
        self.test_button.clicked.connect(self.test)
        self.result = named(QLabel(""), "kokoroTestResult")
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        self.result.setWordWrap(True)
        buttons = QWidget()
        row = QHBoxLayout(buttons)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.download_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.voice, 1)
        row.addWidget(self.test_button)
        row.addStretch(0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.about)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addWidget(buttons)
        layout.addWidget(self.result)
        self.show_state()

    def t(self, key: str, **values: object) -> str:
        return TEXTS.text(key, self.language, **values)

    @property
    def downloaded(self) -> bool:
        return kokoro_installed(self.data_dir, self.files)

    def show_state(self) -> None:
        """Offered or ready, as the files on disk say (not while a download runs)."""
        downloading = self._cancel is not None
        ready = not downloading and self.downloaded
        self.download_button.setVisible(not ready and not downloading)
        self.cancel_button.setVisible(downloading)
        self.progress.setVisible(downloading)
        for widget in (self.voice, self.test_button, self.result):
            widget.setVisible(ready)
        self.test_button.setEnabled(self.say is not None)
        if self.say is None:
            self.result.setText(self.t("no_speaker"))
        if ready:
            show_result(self.status, "ok", self.t("ready", count=self.voice.count()))
        elif not downloading:
            show_result(self.status, "", self.t("missing"))

    def download(self) -> None:
        self._spawn(self._download())

    async def _download(self) -> None:
        await self.run_download()

    async def run_download(self) -> bool:
        """Asks the host, then downloads what is missing; True once Kokoro is in place."""
        self._cancel = asyncio.Event()
        self.progress.setValue(0)
        self.show_state()
        show_result(self.status, "busy", self.t("asking"))
        outcome: tuple[str, str] | None = None
        try:
            offers = await kokoro_offers(self.data_dir, self.files)
            await download_kokoro(offers, self._progressed, self._cancel)
        except DownloadCancelled:
            outcome = ("", self.t("cancelled"))
        except DownloadError as err:
            outcome = ("error", self.t("failed", problem=str(err)))
        finally:
            self._cancel = None
            self.show_state()
        if outcome is not None:
            show_result(self.status, *outcome)
            self.finished.emit(False)
            return False
        self.ready.emit([self.voice.itemData(i) for i in range(self.voice.count())])
        self.finished.emit(True)
        return True

    def _progressed(self, step: DownloadProgress) -> None:
        self.progress.setValue(round(step.fraction * 1000))
        show_result(self.status, "busy", self.t("progress", done=_mb(step.done), total=_mb(step.total)))

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def test(self) -> None:
        self._spawn(self._test())

    async def _test(self) -> None:
        await self.run_test()

    async def run_test(self) -> tuple[bool, str]:
        """Says the sample in the voice chosen, through the app's speaker."""
        if self.say is None:
            return False, self.t("no_speaker")
        heard, message = await voice_test(self.say(str(self.voice.currentData()), SAMPLE), self.test_button,
                                          self.result, self.language, voice=self.voice.currentText())
        self.tested.emit(heard, message)
        return heard, message
