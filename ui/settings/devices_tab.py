"""The settings dialog's Camera and voice tab: the camera source and preview rate, speech on or off, its rate and
volume, the voice test (a sentence said through the app's one speaker, at the form's rate), the neural voice Kokoro
as a download (ui/settings/kokoro_box.py), and the VOICEVOX-compatible engines found, each with its voices and a test
(ui/settings/voice_engines.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QLabel, QLineEdit, QPushButton, QSpinBox

from app.settings.model import CameraSettings, VoiceSettings
from ui.settings.form import SettingsPage, Spawn, button_row, voice_test
from ui.settings.kokoro_box import TEXTS as KOKORO_TEXTS
from ui.settings.kokoro_box import KokoroBox
from ui.settings.voice_engines import TEXTS as ENGINE_TEXTS
from ui.settings.voice_engines import VoiceEnginesBox
from ui.window.naming import named

VoiceTester = Callable[[VoiceSettings, str], Awaitable[None]]  # (voice, sample sentence)


class DevicesPage(SettingsPage):
    voice_tested = Signal(bool, str)  # ok, message

    def __init__(self, camera: CameraSettings, voice: VoiceSettings, *, test_voice: VoiceTester | None,
                 errors: dict[str, QLabel], spawn: Spawn, data_dir: Path | None = None) -> None:
        super().__init__(errors, spawn)
        self._test_voice = test_voice
        form = self.form()
        self.camera_source = named(QLineEdit(camera.source), "cameraSourceEdit")
        self.preview_fps = named(QDoubleSpinBox(), "previewFpsSpin")
        self.preview_fps.setRange(1, 60)
        self.preview_fps.setValue(camera.preview_fps)
        self.voice_enabled = named(QCheckBox(self.t("voice_enabled")), "voiceEnabledCheck")
        self.voice_enabled.setChecked(voice.enabled)
        self.rate = named(QSpinBox(), "rateSpin")
        self.rate.setRange(50, 400)
        self.rate.setValue(voice.rate)
        self.volume = named(QSpinBox(), "volumeSpin")
        self.volume.setRange(0, 100)
        self.volume.setSuffix(" %")
        self.volume.setValue(round(voice.volume * 100))
        self.test_voice_button = named(QPushButton(self.t("test_voice")), "testVoiceButton")
        self.test_voice_button.clicked.connect(self.test_voice)
        self.test_voice_button.setEnabled(test_voice is not None)
        self.voice_result = named(QLabel("" if test_voice else self.t("voice.none")), "voiceResult")
        self.row(form, "camera_source", self.camera_source, "camera.source", hint="camera_source.hint")
        self.row(form, "preview_fps", self.preview_fps, "camera.preview_fps")
        form.addRow("", self.voice_enabled)
        self.row(form, "rate", self.rate, "voice.rate")
        self.row(form, "volume", self.volume, "voice.volume")
        form.addRow("", button_row(self.test_voice_button, self.voice_result))
        self.kokoro: KokoroBox | None = None  # where downloads go is known: the dialog of the running app's data
        if data_dir is not None:
            self.kokoro = KokoroBox(data_dir, language=self.language, spawn=spawn)
            kokoro_label = QLabel(KOKORO_TEXTS.text("title", self.language))
            kokoro_label.setWordWrap(True)
            form.addRow(kokoro_label, self.kokoro)
        self.engines = VoiceEnginesBox(voice.engines, voice.find_engines, language=self.language, spawn=spawn,
                                       volume=lambda: self.volume.value() / 100)
        engines_label = QLabel(ENGINE_TEXTS.text("title", self.language))
        engines_label.setWordWrap(True)
        form.addRow(engines_label, self.engines)
        form.addRow("", self.error_label("voice.engines"))
        self.changed_signal(self.camera_source.textChanged, self.preview_fps.valueChanged,
                            self.voice_enabled.toggled, self.rate.valueChanged, self.volume.valueChanged,
                            self.engines.urls.textChanged, self.engines.find_local.toggled)

    def values(self) -> dict[str, dict[str, Any]]:
        return {"camera": {"source": self.camera_source.text().strip(), "preview_fps": self.preview_fps.value()},
                "voice": {"enabled": self.voice_enabled.isChecked(), "rate": self.rate.value(),
                          "volume": self.volume.value() / 100, "engines": self.engines.given_urls(),
                          "find_engines": self.engines.find_local.isChecked()}}

    def voice_settings(self) -> VoiceSettings:
        """The voice the form describes (speech on: a test is asked for)."""
        return VoiceSettings(enabled=True, rate=self.rate.value(), volume=self.volume.value() / 100)

    def test_voice(self) -> None:
        self._spawn(self._run_voice_test())

    async def _run_voice_test(self) -> None:
        if self._test_voice is None:
            return
        ok, message = await voice_test(self._test_voice(self.voice_settings(), self.t("voice.sample")),
                                       self.test_voice_button, self.voice_result, self.language)
        self.voice_tested.emit(ok, message)
