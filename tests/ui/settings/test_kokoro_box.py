"""The Camera and voice tab offers the neural voice Kokoro as a download (its size and licences said before anything
is fetched), shows the download's progress, then offers its voices to each companion, with a test heard through the
app's real speaker. The host is the loopback double answering as kokoro-onnx's GitHub release does, serving the real
int8 model (tests/app/devices/kokoro_files.py). The three states are rendered to PNG files (``SHOTS_DIR``:
where to keep them) and checked by eye."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import keyring.backends.fail
import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.cards.checks import CompanionChecks
from app.devices.speaker import Pyttsx3Speaker
from app.devices.wiring import Devices
from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from tests.app.devices.kokoro_files import hosted_kokoro
from tests.app.llm.hf_host import HuggingFaceLikeHost, hugging_face_like_host
from tests.ui.conftest import signal_fired, switch_language
from ui.settings.dialog import SettingsDialog

pytestmark = pytest.mark.slow  # Kokoro keeps both cores busy while it speaks


@pytest.fixture
def host() -> Iterator[HuggingFaceLikeHost]:
    with hugging_face_like_host() as server:
        yield server


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("SHOTS_DIR") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shot(widget: QWidget, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    assert widget.grab().save(str(path))
    return path


async def test_kokoro_is_offered_downloaded_and_its_voices_given_to_companions(
        qtbot: QtBot, madoi_home: Path, host: HuggingFaceLikeHost, tmp_path: Path, shots: Path) -> None:
    files = hosted_kokoro(host, tmp_path / "host")
    host.files[files.model.file].rate = 60_000_000  # ~1.5 s: the download is seen on its way
    loaded = load_settings()
    speaker = Pyttsx3Speaker(None, player=[sys.executable, "-c", "pass"], data_dir=loaded.paths.data_dir)
    speaker.kokoro_files = files
    await speaker.start()
    devices: Any = SimpleNamespace(speaker=speaker)
    devices.test_voice = lambda voice, sentence, voice_id: Devices.test_voice(devices, voice, sentence, voice_id)
    checks = CompanionChecks(CompanionChecks.from_files(loaded.paths).cards, lambda: devices)
    dialog: SettingsDialog | None = None
    try:
        switch_language("ja")
        dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()),
                                companions=checks)
        qtbot.addWidget(dialog)
        dialog.resize(1000, 860)
        dialog.show()
        dialog.tabs.setCurrentWidget(dialog.devices)
        box = dialog.devices.kokoro
        assert box is not None
        box.files = files
        # Offered: the size, the licences, and how to get it; nothing fetched
        assert "121 MB" in box.about.text()
        assert "Apache-2.0" in box.about.text()
        assert "MIT" in box.about.text()
        assert box.download_button.isVisible()
        assert box.download_button.text() == "Kokoro をダウンロード（121 MB）"
        assert "Open JTalk" in box.status.text()
        assert not box.test_button.isVisible()
        companion_voices = dialog.companions.rows["hina"].voice
        assert companion_voices.findData("kokoro:jf_alpha") < 0
        shot(dialog, shots, "settings-kokoro-offered-ja")
        assert host.gets(files.model.file) == []
        # Downloading: progress and a cancel; the next download continues where the cancelled one stopped
        seen: list[str] = []
        async with signal_fired(box.finished, timeout=30):
            async with signal_fired(box.progress.valueChanged, timeout=30):
                box.download_button.click()  # the bar's 0 first, then the bytes as they come
            while box.progress.value() <= 0:
                async with signal_fired(box.progress.valueChanged, timeout=30):
                    pass
            assert box.cancel_button.isVisible()
            assert not box.download_button.isVisible()
            seen.append(box.status.text())
            shot(dialog, shots, "settings-kokoro-downloading-ja")
            box.cancel_button.click()
        assert seen[0].startswith("ダウンロード中: ")
        assert box.status.text() == "中止しました。次回は続きからダウンロードします。"
        assert box.download_button.isVisible()
        assert not box.downloaded
        async with signal_fired(box.ready, timeout=60):
            box.download_button.click()
        assert host.gets(files.model.file)[-1]["range"].startswith("bytes=")  # resumed, not fetched again
        # Ready: its voices, a test through the app's speaker, and each companion may be given one
        assert box.status.text().startswith("ダウンロードしました: 日本語の声 5 種類")
        assert box.test_button.isVisible()
        assert companion_voices.findData("kokoro:jf_alpha") >= 0
        box.voice.setCurrentIndex(box.voice.findData("kokoro:jm_kumo"))
        async with signal_fired(box.tested, timeout=60):
            box.test_button.click()
        assert box.result.text() == "Kokoro Kumo が話しました。", box.result.text()
        shot(dialog, shots, "settings-kokoro-ready-ja")
    finally:
        if dialog is not None:
            dialog.close()  # its download task is cancelled before the widgets go
        await speaker.stop()

