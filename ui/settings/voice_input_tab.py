"""The settings dialog's Voice input tab: the microphone (with a level meter and a test), how to talk (hands-free or
push-to-talk, its key), the silence that ends what the user says, the sensitivity, the recognizer and its download
(asked first, with its size; progress shown; the file checked before it is kept), the language, whether words are
sent at once (words the recognizer is unsure of always wait), whether a microphone left on opens at the next start,
and what to do about the companions' own voice in the microphone."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QKeySequenceEdit,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSlider,
    QWidget,
)

from app.settings.model import VoiceInputSettings
from app.voice_input.controls import download_model, listen_to_microphone, microphones
from app.voice_input.recognizer_models import installed, offered
from companions.common.languages import Language
from ui.settings.form import SettingsPage, Spawn, button_row, labelled_row, show_result
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named

log = logging.getLogger(__name__)

TEXTS: Final = Texts("settings_voice_input", {
    "tab": QT_TRANSLATE_NOOP("settings_voice_input", "Voice input"),
    "device": QT_TRANSLATE_NOOP("settings_voice_input", "Microphone"),
    "device.default": QT_TRANSLATE_NOOP("settings_voice_input", "The system's default microphone"),
    "device.hint": QT_TRANSLATE_NOOP("settings_voice_input", "file:/path/to/speech.wav stands in for a microphone."),
    "test": QT_TRANSLATE_NOOP("settings_voice_input", "Test the microphone"),
    "testing": QT_TRANSLATE_NOOP("settings_voice_input", "Say something…"),
    "test.ok": QT_TRANSLATE_NOOP("settings_voice_input", "Heard you (loudest {level} dB)."),
    "test.quiet": QT_TRANSLATE_NOOP("settings_voice_input", "Almost nothing heard (loudest {level} dB): is the "
                                    "microphone muted, or too far?"),
    "test.failed": QT_TRANSLATE_NOOP("settings_voice_input", "Could not listen: {reason}"),
    "mode": QT_TRANSLATE_NOOP("settings_voice_input", "How to talk"),
    "mode.hands-free": QT_TRANSLATE_NOOP("settings_voice_input", "Hands-free: just speak"),
    "mode.push-to-talk": QT_TRANSLATE_NOOP("settings_voice_input", "Push-to-talk: hold the key or the button"),
    "key": QT_TRANSLATE_NOOP("settings_voice_input", "Push-to-talk key"),
    "silence": QT_TRANSLATE_NOOP("settings_voice_input", "Silence that ends what you say"),
    "silence.hint": QT_TRANSLATE_NOOP("settings_voice_input", "Longer if you pause to think; shorter for quicker "
                                      "answers."),
    "sensitivity": QT_TRANSLATE_NOOP("settings_voice_input", "Sensitivity"),
    "sensitivity.hint": QT_TRANSLATE_NOOP("settings_voice_input", "Left: only clear, loud speech. Right: the "
                                          "faintest voice (also more noise)."),
    "recognizer": QT_TRANSLATE_NOOP("settings_voice_input", "Recognition"),
    "recognizer.pocketsphinx": QT_TRANSLATE_NOOP("settings_voice_input", "Built in: English, offline, no download"),
    "recognizer.faster-whisper-base": QT_TRANSLATE_NOOP("settings_voice_input",
                                                        "Whisper base: hears Japanese or English ({size} MB download)"),
    "recognizer.faster-whisper-small": QT_TRANSLATE_NOOP(
        "settings_voice_input", "Whisper small: Japanese or English, fewer mistakes, needs a fast computer ({size} MB "
        "download)"),
    "recognizer.whisper-tiny": QT_TRANSLATE_NOOP("settings_voice_input",
                                                 "Whisper tiny: Japanese and English ({size} MB download)"),
    "recognizer.whisper-base": QT_TRANSLATE_NOOP("settings_voice_input",
                                                 "Whisper base: Japanese and English, better ({size} MB download)"),
    "model.ready": QT_TRANSLATE_NOOP("settings_voice_input", "Downloaded and checked."),
    "model.missing": QT_TRANSLATE_NOOP("settings_voice_input", "Not downloaded yet ({size} MB)."),
    "model.builtin": QT_TRANSLATE_NOOP("settings_voice_input", "Nothing to download."),
    "download": QT_TRANSLATE_NOOP("settings_voice_input", "Download…"),
    "cancel": QT_TRANSLATE_NOOP("settings_voice_input", "Cancel download"),
    "download.progress": QT_TRANSLATE_NOOP("settings_voice_input", "Downloading: {done} of {total} MB"),
    "download.failed": QT_TRANSLATE_NOOP("settings_voice_input", "Not downloaded: {reason}"),
    "download.cancelled": QT_TRANSLATE_NOOP("settings_voice_input", "Download cancelled: it continues where it "
                                            "stopped next time."),
    "consent.title": QT_TRANSLATE_NOOP("settings_voice_input", "Download a speech model?"),
    "consent.body": QT_TRANSLATE_NOOP(
        "settings_voice_input", "{file} ({size} MB) will be downloaded from huggingface.co ({repo}, MIT) "
        "and kept in {folder}. Its checksum is checked before it is used; recognition then runs on this computer, "
        "offline."),
    "consent.yes": QT_TRANSLATE_NOOP("settings_voice_input", "Download"),
    "consent.no": QT_TRANSLATE_NOOP("settings_voice_input", "Not now"),
    "language": QT_TRANSLATE_NOOP("settings_voice_input", "Language you speak"),
    "language.auto": QT_TRANSLATE_NOOP("settings_voice_input", "Detect (Whisper only)"),
    "language.ja": QT_TRANSLATE_NOOP("settings_voice_input", "Japanese"),
    "language.en": QT_TRANSLATE_NOOP("settings_voice_input", "English"),
    "send_at_end": QT_TRANSLATE_NOOP("settings_voice_input", "Send what I said as soon as I stop (otherwise it "
                                     "waits in the message box)"),
    "send_at_end.hint": QT_TRANSLATE_NOOP("settings_voice_input", "Words the recogniser is not sure of always "
                                          "wait in the box for Enter."),
    "keep_on": QT_TRANSLATE_NOOP("settings_voice_input", "Keep the microphone on at the next start if it was on "
                                 "when I quit (otherwise it starts off)"),
    "echo": QT_TRANSLATE_NOOP("settings_voice_input", "Their voice in the microphone"),
    "echo.guard": QT_TRANSLATE_NOOP("settings_voice_input", "Tell it apart: I can cut them off by speaking"),
    "echo.pause": QT_TRANSLATE_NOOP("settings_voice_input", "Ignore the microphone while they speak"),
    "echo.hint": QT_TRANSLATE_NOOP("settings_voice_input", "Loud speakers next to the microphone? A headset works "
                                   "best."),
})
METER_FLOOR_DB: Final = -60


class VoiceInputPage(SettingsPage):
    tested = Signal(bool, str)
    download_finished = Signal(bool, str)

    def __init__(self, section: VoiceInputSettings, data_dir: Path, *, errors: dict[str, QLabel],
                 spawn: Spawn) -> None:
        super().__init__(errors, spawn)
        self.data_dir = data_dir
        self._cancel: threading.Event | None = None
        self.consent: QMessageBox | None = None
        form = self.form()
        self.device = named(QComboBox(), "microphoneCombo")
        self.device.setEditable(True)
        self.device.addItem(self.tt("device.default"), "")
        for name in microphones():
            self.device.addItem(name, name)
        self._choose(self.device, section.device, editable=True)
        self.test_button = named(QPushButton(self.tt("test")), "testMicrophoneButton")
        self.test_button.clicked.connect(self.test_microphone)
        self.meter = named(QProgressBar(), "microphoneLevel")
        self.meter.setRange(METER_FLOOR_DB, 0)
        self.meter.setValue(METER_FLOOR_DB)
        self.meter.setTextVisible(False)
        self.meter.setMaximumHeight(10)
        self.test_result = named(QLabel(), "microphoneTestResult")
        self.test_result.setWordWrap(True)
        self.mode = named(QComboBox(), "talkModeCombo")
        for mode in ("hands-free", "push-to-talk"):
            self.mode.addItem(self.tt(f"mode.{mode}"), mode)
        self._choose(self.mode, section.mode)
        self.key = named(QKeySequenceEdit(QKeySequence(section.push_to_talk_key)), "pushToTalkKeyEdit")
        self.key.setMaximumSequenceLength(1)
        self.silence = named(QDoubleSpinBox(), "endSilenceSpin")
        self.silence.setRange(0.2, 3.0)
        self.silence.setSingleStep(0.1)
        self.silence.setDecimals(1)
        self.silence.setSuffix(" s")
        self.silence.setValue(section.end_silence_s)
        self.sensitivity = named(QSlider(Qt.Orientation.Horizontal), "sensitivitySlider")
        self.sensitivity.setRange(0, 100)
        self.sensitivity.setValue(round(section.sensitivity * 100))
        self.recognizer = named(QComboBox(), "recognizerCombo")
        self.recognizer.addItem(self.tt("recognizer.pocketsphinx"), "pocketsphinx")
        for choice, model in offered().items():
            self.recognizer.addItem(self.tt(f"recognizer.{choice}", size=model.megabytes), choice)
        self._choose(self.recognizer, section.recognizer)
        self.download_button = named(QPushButton(self.tt("download")), "downloadModelButton")
        self.download_button.clicked.connect(self.ask_download)
        self.download_progress = named(QProgressBar(), "downloadProgress")
        self.download_progress.setRange(0, 100)
        self.download_progress.hide()
        self.model_status = named(QLabel(), "modelStatus")
        self.model_status.setWordWrap(True)
        self.language_combo = named(QComboBox(), "speechLanguageCombo")
        for lang in ("auto", "ja", "en"):
            self.language_combo.addItem(self.tt(f"language.{lang}"), lang)
        self._choose(self.language_combo, section.language)
        self.send_at_end = named(QCheckBox(self.tt("send_at_end")), "sendAtEndCheck")
        self.send_at_end.setChecked(section.send_at_end)
        self.keep_on = named(QCheckBox(self.tt("keep_on")), "keepMicrophoneOnCheck")
        self.keep_on.setChecked(section.keep_on)
        self.echo = named(QComboBox(), "echoCombo")
        for echo in ("guard", "pause"):
            self.echo.addItem(self.tt(f"echo.{echo}"), echo)
        self._choose(self.echo, section.echo)

        self.labelled(form, "device", self.device, hint="device.hint")
        form.addRow("", button_row(self.test_button, self.meter))
        form.addRow("", self.test_result)
        self.labelled(form, "mode", self.mode)
        self.labelled(form, "key", self.key)
        self.labelled(form, "silence", self.silence, hint="silence.hint")
        self.labelled(form, "sensitivity", self.sensitivity, hint="sensitivity.hint")
        self.labelled(form, "recognizer", self.recognizer)
        form.addRow("", button_row(self.download_button, self.model_status))
        form.addRow("", self.download_progress)
        self.labelled(form, "language", self.language_combo)
        labelled_row(form, "", self.send_at_end, hint=self.tt("send_at_end.hint"))
        form.addRow("", self.keep_on)
        self.labelled(form, "echo", self.echo, hint="echo.hint")
        self.recognizer.currentIndexChanged.connect(self._show_model)
        self.changed_signal(self.device.currentTextChanged, self.mode.currentIndexChanged,
                            self.key.keySequenceChanged, self.silence.valueChanged, self.sensitivity.valueChanged,
                            self.recognizer.currentIndexChanged, self.language_combo.currentIndexChanged,
                            self.send_at_end.toggled, self.keep_on.toggled, self.echo.currentIndexChanged)
        self._show_model()

    @staticmethod
    def title(language: Language | None = None) -> str:
        return TEXTS.text("tab", language)

    def tt(self, name: str, **values: object) -> str:
        return TEXTS.text(name, self.language, **values)

    def labelled(self, form: QFormLayout, key: str, widget: QWidget, *, hint: str | None = None) -> None:
        """A row labelled with this tab's text ``key``, its text ``hint`` under the widget."""
        labelled_row(form, self.tt(key), widget, hint=self.tt(hint) if hint is not None else None)

    @staticmethod
    def _choose(combo: QComboBox, value: str, *, editable: bool = False) -> None:
        index = combo.findData(value)
        if index >= 0:
            combo.setCurrentIndex(index)
        elif editable:
            combo.addItem(value, value)
            combo.setCurrentIndex(combo.count() - 1)

    def device_value(self) -> str:
        text = self.device.currentText().strip()
        index = self.device.findText(text)
        return str(self.device.itemData(index)) if index >= 0 else text

    def values(self) -> dict[str, dict[str, Any]]:
        key = self.key.keySequence().toString(QKeySequence.SequenceFormat.PortableText)
        return {"voice_input": {
            "device": self.device_value(), "mode": self.mode.currentData(),
            "push_to_talk_key": key or "F8", "end_silence_s": round(self.silence.value(), 1),
            "sensitivity": self.sensitivity.value() / 100, "recognizer": self.recognizer.currentData(),
            "language": self.language_combo.currentData(), "send_at_end": self.send_at_end.isChecked(),
            "keep_on": self.keep_on.isChecked(), "echo": self.echo.currentData()}}

    # -- the microphone test ---------------------------------------------------------------------------------------
    def test_microphone(self) -> None:
        self._spawn(self._test())

    async def _test(self) -> None:
        self.test_button.setEnabled(False)
        show_result(self.test_result, "busy", self.tt("testing"))
        try:
            loudest = await listen_to_microphone(self.device_value(), self._show_level)
        except Exception as err:  # no microphone is a message, not a crash
            ok, message = False, self.tt("test.failed", reason=str(err) or type(err).__name__)
        else:
            ok = loudest > -50
            message = self.tt("test.ok" if ok else "test.quiet", level=round(loudest))
        finally:
            self.test_button.setEnabled(True)
            self.meter.setValue(METER_FLOOR_DB)
        show_result(self.test_result, "ok" if ok else "error", message)
        self.tested.emit(ok, message)

    def _show_level(self, level: float) -> None:
        self.meter.setValue(max(METER_FLOOR_DB, min(0, round(level))))

    # -- the model ---------------------------------------------------------------------------------------------
    def _model(self) -> Any:
        return offered().get(self.recognizer.currentData())

    def _show_model(self) -> None:
        model = self._model()
        if self._cancel is not None:
            return
        if model is None:
            self.download_button.hide()
            show_result(self.model_status, "ok", self.tt("model.builtin"))
        elif installed(self.data_dir, model):
            self.download_button.hide()
            show_result(self.model_status, "ok", self.tt("model.ready"))
        else:
            self.download_button.show()
            self.download_button.setText(self.tt("download"))
            show_result(self.model_status, "busy", self.tt("model.missing", size=model.megabytes))

    def offer(self, choice: str) -> None:
        """The microphone's offer (words not understood): ``choice`` chosen, and its download asked for when it is
        not downloaded yet. Saving the dialog puts it in use."""
        self._choose(self.recognizer, choice)
        model = self._model()
        if model is not None and not installed(self.data_dir, model):
            self.ask_download()

    def ask_download(self) -> None:
        """Asks before anything is downloaded (what, how big, from where, kept where); a window-modal question."""
        if self._cancel is not None:
            self._cancel.set()
            return
        model = self._model()
        if model is None:
            return
        box = QMessageBox(QMessageBox.Icon.Question, self.tt("consent.title"),
                          self.tt("consent.body", file=model.file, size=model.megabytes, repo=model.files[0].repo,
                                  folder=str(self.data_dir / "speech-models")),
                          QMessageBox.StandardButton.NoButton, self)
        box.setObjectName("downloadConsent")
        yes = box.addButton(self.tt("consent.yes"), QMessageBox.ButtonRole.AcceptRole)
        yes.setObjectName("consentDownloadButton")
        no = box.addButton(self.tt("consent.no"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(no)
        box.setEscapeButton(no)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.buttonClicked.connect(self._on_consent)
        box.finished.connect(box.deleteLater)
        self.consent = box
        box.open()

    def _on_consent(self, button: QPushButton) -> None:
        self.consent = None
        if button.objectName() == "consentDownloadButton":
            self._spawn(self._download(self.recognizer.currentData()))

    async def _download(self, choice: str) -> None:
        cancel = self._cancel = threading.Event()
        self.download_button.setText(self.tt("cancel"))
        self.download_progress.setValue(0)
        self.download_progress.show()
        ok, message = True, self.tt("model.ready")
        try:
            await download_model(choice, self.data_dir, self._progress, cancel)
        except Exception as err:  # a message; what came is kept to continue from (a wrong file is not)
            log.warning("speech model download failed: %s", err)
            ok, message = False, self.tt("download.cancelled" if cancel.is_set() else "download.failed",
                                         reason=str(err))
        finally:
            self._cancel = None
            self.download_progress.hide()
        self._show_model()
        if not ok:
            show_result(self.model_status, "busy" if cancel.is_set() else "error", message)
        self.download_finished.emit(ok, message)

    def _progress(self, done: int, total: int) -> None:
        self.download_progress.setValue(round(100 * done / total) if total else 0)
        show_result(self.model_status, "busy", self.tt("download.progress", done=round(done / 1e6),
                                                        total=round(total / 1e6)))
