"""Talking to the companions as the user meets it in the window: the status bar's microphone (its states,
the one-click mute kept across restarts), the words in the message box as they are said and sent to whom "To" says,
push-to-talk with the key, and the settings tab (the microphone test's level, the model download with consent,
progress and the checksum). Real runtime and devices: espeak-ng speech in a WAV file as the microphone,
PocketSphinx, scripted companion models."""

from __future__ import annotations

import asyncio
import hashlib
import tomllib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPushButton
from pytestqt.qtbot import QtBot

from app.settings.model import VoiceInputSettings
from app.voice_input import recognizer_models
from companions.llm.scripted import say
from companions.voice_input.events import EchoAdvice, MicrophoneChanged
from tests.app.llm.hf_host import HuggingFaceLikeHost, hugging_face_like_host
from tests.app.speech_audio import clip
from tests.app.voice_input.spoken_japanese import japanese_clip
from tests.app.voice_input.whisper_files import installed_whisper_base
from tests.ui.conftest import signal_fired
from tests.ui.open_window import open_window
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until
from ui.settings.voice_input_tab import VoiceInputPage
from ui.window.main_thread_gc import MainThreadGC
from ui.window.main_window import MainWindow

QUESTION = "what is the weather like tomorrow"


@pytest.fixture(autouse=True)
def _gc_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    guard = MainThreadGC(qapp, interval_ms=200)
    yield
    guard.stop()


@pytest.fixture
def english(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MADOI_LANGUAGE", "en")
    return madoi_home


async def test_spoken_words_show_in_the_box_and_go_to_whom_to_says(
        qtbot: QtBot, english: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spoken = clip(QUESTION, tmp_path / "user.wav", before_s=1.5, after_s=30.0)
    monkeypatch.setenv("MADOI_VOICE_INPUT_DEVICE", f"file:{spoken.path}")
    monkeypatch.setenv("MADOI_VOICE_INPUT_END_SILENCE_S", "0.5")
    cast = scripted_cast()
    lines(cast["akari"], say("It will be sunny tomorrow."))
    async with scripted_runtime(cast) as runtime:
        window = await open_window(qtbot, runtime)
        switch = window.microphone_switch
        assert switch.text() == "Microphone off"
        assert not window.talk_button.isEnabled()
        window.chat.address.set_addressees(["akari"])  # "To: Akari", as the user chose
        window.chat.input.setPlainText("Akari,")  # typed before speaking: the words come after it
        shown: list[str] = []
        window.spoken_words.shown.connect(shown.append)
        async with signal_fired(switch.switched, timeout=30):  # PocketSphinx loads its model first
            qtbot.mouseClick(switch, Qt.MouseButton.LeftButton)
        assert switch.text() == "Listening"
        assert window.talk_button.isEnabled()
        assert tomllib.loads((english / "settings.toml").read_text("utf-8"))["voice_input"]["on"] is True
        await until(window.chat.message_shown, lambda: "sunny tomorrow" in window.chat.view.toPlainText(), 60)
        assert any(text.startswith("Akari, ") and text != f"Akari, {QUESTION}" for text in shown)  # as it was said
        assert f"Akari, {QUESTION}" in window.chat.view.toPlainText()
        assert window.chat.input.toPlainText() == ""  # sent from the box, so the box is empty again
        stored = await runtime.parts.conversations.store.messages(runtime.parts.conversations.active_id)
        user_message = next(m.message for m in stored if m.message.params.from_ == runtime.settings.general.user_name)
        assert user_message.params.to == ["akari"]
        cast.assert_used_up()
        window.close()


async def test_japanese_speech_is_not_sent_and_the_microphone_offers_whisper(
        qtbot: QtBot, english: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spoken = japanese_clip("おはようございます", tmp_path / "ja.wav", before_s=1.0, after_s=30.0)
    monkeypatch.setenv("MADOI_VOICE_INPUT_DEVICE", f"file:{spoken.path}")
    monkeypatch.setenv("MADOI_VOICE_INPUT_END_SILENCE_S", "0.5")
    async with scripted_runtime(scripted_cast()) as runtime:  # the companions' models expect nothing
        window = await open_window(qtbot, runtime)
        switch = window.microphone_switch
        async with signal_fired(switch.switched, timeout=30):
            qtbot.mouseClick(switch, Qt.MouseButton.LeftButton)
        await until(switch.shown, lambda: switch.text() == "Not understood", 30)
        assert "could not be made out as English" in switch.toolTip()
        assert "download Whisper (148 MB) in Settings > Voice input" in switch.toolTip()
        assert window.chat.input.toPlainText() == ""  # no English words made of it, in the box or sent
        stored = await runtime.parts.conversations.store.messages(runtime.parts.conversations.active_id)
        assert [m for m in stored if m.message.params.from_ == runtime.settings.general.user_name] == []
        offer = window.extras.notifications.history[-1]
        assert (offer.title, offer.action) == ("Not understood: nothing was sent", "Download Whisper (148 MB)…")
        button = window.extras.notifications.findChild(QPushButton, "notificationAction")
        button.click()  # opens the Voice input tab with Whisper chosen and asks before downloading
        dialog = window.extras.dialog
        assert dialog is not None
        assert dialog.tabs.currentWidget() is dialog.voice_input
        assert dialog.voice_input.recognizer.currentData() == "faster-whisper-base"
        assert dialog.voice_input.consent is not None
        dialog.voice_input.consent.reject()
        dialog.close()
        window.close()


@pytest.mark.slow  # Whisper base decodes for a second or two on 2 busy cores
async def test_with_whisper_and_english_alone_japanese_speech_is_not_understood_nor_sent(
        qtbot: QtBot, english: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    installed_whisper_base(english, monkeypatch)  # as if downloaded (tests/app/voice_input/test_faster_whisper.py)
    spoken = japanese_clip("今日はいい天気ですね", tmp_path / "ja.wav", before_s=1.0, after_s=30.0)
    monkeypatch.setenv("MADOI_VOICE_INPUT_DEVICE", f"file:{spoken.path}")
    monkeypatch.setenv("MADOI_VOICE_INPUT_RECOGNIZER", "faster-whisper-base")
    monkeypatch.setenv("MADOI_VOICE_INPUT_LANGUAGE", "en")
    async with scripted_runtime(scripted_cast()) as runtime:  # the companions' models expect nothing
        window = await open_window(qtbot, runtime)
        switch = window.microphone_switch
        async with signal_fired(switch.switched, timeout=30):
            qtbot.mouseClick(switch, Qt.MouseButton.LeftButton)
        await until(switch.shown, lambda: switch.text() == "Not understood", 30)
        assert "could not be made out as English" in switch.toolTip()
        assert window.chat.input.toPlainText() == ""  # no English words made of it, in the box or sent
        stored = await runtime.parts.conversations.store.messages(runtime.parts.conversations.active_id)
        assert [m for m in stored if m.message.params.from_ == runtime.settings.general.user_name] == []
        window.close()


async def test_the_microphone_says_what_it_does_and_suggests_a_headset(qtbot: QtBot, english: Path) -> None:
    async with scripted_runtime(scripted_cast()) as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        switch = window.microphone_switch
        runtime.settings.voice_input.on = True  # as if switched on; the states come from the voice input
        switch.setChecked(True)
        for state, text in (("listening", "Listening"), ("hearing", "Hearing you…"),
                            ("recognising", "Recognising…")):
            runtime.bus.publish(MicrophoneChanged(state))
            await until(switch.shown, lambda t=text: switch.text() == t, 5)
        runtime.bus.publish(MicrophoneChanged("unavailable", "no microphone: no audio input device was found"))
        await until(switch.shown, lambda: switch.text() == "No microphone", 5)
        assert "no audio input device was found" in switch.toolTip()
        runtime.bus.publish(MicrophoneChanged("listening"))
        runtime.bus.publish(EchoAdvice(True, -1.0))
        await until(switch.shown, lambda: switch.text() == "Listening · headset?", 5)
        assert "headset" in switch.toolTip()
        window.close()


async def test_the_push_to_talk_key_held_talks_and_types_nothing(qtbot: QtBot, english: Path) -> None:
    async with scripted_runtime(scripted_cast()) as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        voice_input = runtime.parts.devices.voice_input
        assert voice_input is not None
        await voice_input.switch(True)  # a file microphone is not set: the default device, absent here
        calls: list[str] = []
        window.talk_button.key.port = type("Port", (), {  # what the key does, recorded
            "press": lambda self: calls.append("press"), "release": lambda self: calls.append("release")})()
        window.chat.input.setFocus()
        qtbot.keyPress(window.chat.input, Qt.Key.Key_F8)
        qtbot.keyPress(window.chat.input, Qt.Key.Key_F8)  # a second press without a release: a held key repeats
        qtbot.keyRelease(window.chat.input, Qt.Key.Key_F8)
        assert calls == ["press", "release"]
        assert window.chat.input.toPlainText() == ""
        window.close()


# -- the settings tab ----------------------------------------------------------------------------------------------

@pytest.fixture
def model_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HuggingFaceLikeHost]:
    """whisper.cpp's tiny model as a ggml file of ~1 MB on the loopback host double answering as Hugging Face."""
    body = recognizer_models.WHISPER_MAGIC + bytes(range(256)) * 4000
    served = tmp_path / "host" / "ggml-tiny.bin"
    served.parent.mkdir()
    served.write_bytes(body)
    with hugging_face_like_host() as host:
        host.host(served)
        model = recognizer_models.MODELS["whisper-tiny"].on_host(host.url)
        model = replace(model, files=(replace(model.files[0], size=len(body)),),
                        sha1=hashlib.sha1(body, usedforsecurity=False).hexdigest())
        monkeypatch.setitem(recognizer_models.MODELS, "whisper-tiny", model)
        yield host


@pytest.fixture
def model_server(model_host: HuggingFaceLikeHost) -> bytes:
    return model_host.files["ggml-tiny.bin"].path.read_bytes()


def _page(tmp_path: Path, section: VoiceInputSettings) -> tuple[VoiceInputPage, list[object]]:
    tasks: list[object] = []

    def spawn(coro: object) -> None:
        tasks.append(asyncio.get_running_loop().create_task(coro))  # type: ignore[arg-type]

    return VoiceInputPage(section, tmp_path, errors={}, spawn=spawn), tasks


async def test_the_model_is_downloaded_only_after_the_user_agrees_with_progress(
        qtbot: QtBot, tmp_path: Path, model_server: bytes) -> None:
    page, _ = _page(tmp_path, VoiceInputSettings(recognizer="whisper-tiny"))
    qtbot.addWidget(page)
    page.show()
    assert page.model_status.text() == "Not downloaded yet (1 MB)."
    page.ask_download()
    box = page.consent
    assert box is not None
    assert "ggml-tiny.bin" in box.text()
    assert "checksum" in box.text()
    progress: list[int] = []
    page.download_progress.valueChanged.connect(progress.append)
    async with signal_fired(page.download_finished, timeout=30):
        qtbot.mouseClick(box.findChild(type(page.download_button), "consentDownloadButton"),
                         Qt.MouseButton.LeftButton)
    assert page.model_status.text() == "Downloaded and checked."
    assert (tmp_path / "speech-models" / "ggml-tiny.bin").read_bytes() == model_server
    assert progress
    assert page.values()["voice_input"]["recognizer"] == "whisper-tiny"


async def test_the_tab_says_whether_a_microphone_left_on_opens_at_the_next_start(qtbot: QtBot, tmp_path: Path) -> None:
    page, _ = _page(tmp_path, VoiceInputSettings(keep_on=True))
    qtbot.addWidget(page)
    assert page.keep_on.text().startswith("Keep the microphone on at the next start")
    assert page.keep_on.isChecked()
    page.keep_on.setChecked(False)
    assert page.values()["voice_input"]["keep_on"] is False


async def test_a_cancelled_download_says_so_and_continues_where_it_stopped(
        qtbot: QtBot, tmp_path: Path, model_host: HuggingFaceLikeHost) -> None:
    model_host.files["ggml-tiny.bin"].rate = 300_000  # ~3.4 s for the file
    page, _ = _page(tmp_path, VoiceInputSettings(recognizer="whisper-tiny"))
    qtbot.addWidget(page)
    page.ask_download()
    assert page.consent is not None
    async with signal_fired(page.download_finished, timeout=30):
        page.consent.findChild(QPushButton, "consentDownloadButton").click()
        await until(page.download_progress.valueChanged, lambda: page.download_progress.value() >= 10, 10)
        page.download_button.click()  # "Cancel download"
    assert page.model_status.text() == "Download cancelled: it continues where it stopped next time."
    model_host.files["ggml-tiny.bin"].rate = None
    async with signal_fired(page.download_finished, timeout=30):
        page.ask_download()
        assert page.consent is not None
        page.consent.findChild(QPushButton, "consentDownloadButton").click()
    assert page.model_status.text() == "Downloaded and checked."
    assert model_host.gets("ggml-tiny.bin")[-1]["range"].startswith("bytes=")  # the rest, not all of it again


async def test_not_now_downloads_nothing(qtbot: QtBot, tmp_path: Path, model_server: bytes) -> None:
    page, tasks = _page(tmp_path, VoiceInputSettings(recognizer="whisper-tiny"))
    qtbot.addWidget(page)
    page.ask_download()
    assert page.consent is not None
    page.consent.reject()
    page.consent.buttons()[1].click()
    assert not tasks
    assert not (tmp_path / "speech-models" / "ggml-tiny.bin").exists()


async def test_the_microphone_test_shows_the_level_heard(qtbot: QtBot, tmp_path: Path) -> None:
    spoken = clip("testing one two three", tmp_path / "test.wav", before_s=0.2, after_s=0.5)
    page, _ = _page(tmp_path, VoiceInputSettings(device=f"file:{spoken.path}"))
    qtbot.addWidget(page)
    levels: list[int] = []
    page.meter.valueChanged.connect(levels.append)
    async with signal_fired(page.tested, timeout=20):
        page.test_microphone()
    assert page.test_result.text().startswith("Heard you (loudest ")
    assert max(levels) > -40  # the meter moved with the voice
    missing, _ = _page(tmp_path, VoiceInputSettings(device=f"file:{tmp_path / 'none.wav'}"))
    qtbot.addWidget(missing)
    async with signal_fired(missing.tested, timeout=20):
        missing.test_microphone()
    assert missing.test_result.text().startswith("Could not listen: no microphone")
