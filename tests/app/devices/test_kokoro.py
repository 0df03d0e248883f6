"""The neural voice Kokoro-82M: downloaded with consent through the app's downloader from a loopback host that
answers as its GitHub release does, checked by its pinned sha256, then heard in a companion's voice on the app's own
onnxruntime (the real int8 model, assembled from PyPI packages by scripts/kokoro_model.py; WAVs really written).
Before the download a line in a Kokoro voice is said by the default voice, and the status says how to get it."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.devices.kokoro_files import KOKORO_FILES, download_kokoro, kokoro_installed, kokoro_offers
from app.devices.kokoro_phonemes import JapanesePhonemes, kana_phonemes
from app.devices.speaker import Pyttsx3Speaker, first_clause, sentences
from app.devices.voices import voice_choices
from app.devices.wiring import build_devices
from app.downloads import DownloadProgress
from app.settings.model import Settings
from app.settings.sections import CompanionSettings
from companions.devices.ports import Utterance
from companions.wire.bus import InProcessBus
from tests.app.devices.kokoro_files import hosted_kokoro, kokoro_model
from tests.app.devices.stand_in_player import PLAYER
from tests.app.llm.hf_host import HuggingFaceLikeHost, hugging_face_like_host


@pytest.fixture
def host() -> Iterator[HuggingFaceLikeHost]:
    with hugging_face_like_host() as server:
        yield server


def test_japanese_becomes_kokoro_s_phonemes_by_misaki_s_rules() -> None:
    # ん as the next sound wants it, っ a glottal stop, ー a long vowel, small kana with the one before
    assert kana_phonemes("シンブン") == "ɕimbɯɴ"
    assert kana_phonemes("ヨンデ") == "jonde"
    assert kana_phonemes("チョット") == "ʨoʔto"
    assert kana_phonemes("キョー") == "kʲoː"
    assert kana_phonemes("ティー") == "tʲiː"
    phonemes = JapanesePhonemes()
    # Open JTalk's reading (は said ワ, 今日 キョー, the verb and its ending one word), punctuation as Kokoro's
    assert phonemes("今日は新聞を読んでから、散歩に行きます。") == "kʲoː βa ɕimbɯɴ o jonde kaɾa, sampo ɲi ikʲimasɨ."
    assert phonemes("「本当？」") == "“hontoː?”"


def test_without_open_jtalk_nothing_reads_japanese_for_kokoro(monkeypatch: pytest.MonkeyPatch) -> None:
    """Open JTalk's dictionary is Madoi's one Japanese dictionary (search cuts words with it too, and the bundle has
    it): without pyopenjtalk-plus there is no reading to give Kokoro, and it says so when it loads."""
    monkeypatch.setitem(sys.modules, "pyopenjtalk", None)
    with pytest.raises(ImportError):
        JapanesePhonemes()


def test_a_line_is_rendered_sentence_by_sentence_the_first_heard_after_its_first_clause() -> None:
    line = "おはよう、今日はいい天気だね。午後から少し雲が出るみたいだけど、雨は降らないって。"
    assert first_clause(sentences(line, 60)) == ["おはよう、", "今日はいい天気だね。",
                                                 "午後から少し雲が出るみたいだけど、雨は降らないって。"]
    assert first_clause(sentences("はい。行きましょう。", 60)) == ["はい。", "行きましょう。"]  # short: whole
    assert first_clause(["図書館で古い地図を調べてみましょう、ね。"]) == ["図書館で古い地図を調べてみましょう、ね。"]


def test_kokoro_loads_at_the_start_only_when_a_companion_speaks_with_it(bus: InProcessBus) -> None:
    assert not build_devices(Settings(), bus).speaker.kokoro_at_start  # 2 s and 220 MB for nothing
    chosen = Settings(companions={"hina": CompanionSettings(voice={"ja": "kokoro:jf_nezumi"})})
    assert build_devices(chosen, bus).speaker.kokoro_at_start


async def test_a_companion_given_a_kokoro_voice_in_the_settings_loads_it_at_once(bus: InProcessBus) -> None:
    devices = build_devices(Settings.model_validate({"camera": {"source": "none"}}), bus)
    preloads: list[bool] = []
    devices.speaker._start_kokoro = lambda: preloads.append(True) or True  # type: ignore[method-assign]
    devices.speaker._thread = threading.current_thread()  # as if started
    await devices.apply_settings(Settings.model_validate({"camera": {"source": "none"},
                                                          "companions": {"hina": {"voice": {"ja": "kokoro:jm_kumo"}}}}))
    assert preloads == [True]
    devices.speaker._thread = None


def test_the_pinned_model_is_the_file_the_tests_assemble() -> None:
    assert (KOKORO_FILES.model.size, KOKORO_FILES.model.sha256) == (kokoro_model.MODEL_SIZE, kokoro_model.MODEL_SHA256)
    assert KOKORO_FILES.model.url == ("https://github.com/thewh1teagle/kokoro-onnx/releases/download/"
                                      "model-files-v1.0/kokoro-v1.0.int8.onnx")
    assert KOKORO_FILES.voices.url.endswith("/model-files-v1.0/voices-v1.0.bin")
    assert KOKORO_FILES.size == 120_575_669  # 92.4 + 28.2 MB, what the settings say before the download


@pytest.mark.slow  # Kokoro keeps both cores busy while it speaks
async def test_kokoro_downloads_with_consent_and_a_companion_is_heard_in_its_voice(
        host: HuggingFaceLikeHost, bus: InProcessBus, tmp_path: Path) -> None:
    files = hosted_kokoro(host, tmp_path / "host")
    data_dir = tmp_path / "data"
    speaker = Pyttsx3Speaker(bus, player=PLAYER, data_dir=data_dir)
    speaker.kokoro_files = files
    played: list[tuple[float, Path | None, int]] = []
    lock = threading.Lock()

    def listen(path: Path | None) -> None:
        rate = 0
        if path is not None:
            with wave.open(str(path), "rb") as wav:
                rate = wav.getframerate()
        with lock:
            played.append((time.monotonic(), path, rate))

    speaker.playback_listeners.append(listen)
    await speaker.start()
    try:
        # Not downloaded: no Kokoro voice is offered, a line asking for one is heard in Mei's, the status says why
        assert not speaker.kokoro_voices
        before = await speaker.speak(Utterance("はい。", voice="kokoro:jf_alpha", speaker_id="hina"))
        assert (before.success, before.voice) == (True, "openjtalk/mei"), before
        assert "Kokoro is not downloaded" in speaker.status.reason
        # What the user agrees to: the two files, their sizes and licence, nothing fetched yet
        offers = await kokoro_offers(data_dir, files)
        assert [(o.model.file, o.size, o.model.licence) for o in offers] == [
            ("kokoro-v1.0.int8.onnx", 92_361_271, "Apache-2.0"),
            ("voices-v1.0.bin", kokoro_model.VOICES_SIZE, "Apache-2.0")]
        assert host.gets("kokoro-v1.0.int8.onnx") == []
        progress: list[DownloadProgress] = []
        await download_kokoro(offers, progress.append, asyncio.Event())
        assert kokoro_installed(data_dir, files)
        assert progress[-1].done == progress[-1].total == sum(o.size for o in offers)
        assert [p.done for p in progress] == sorted(p.done for p in progress)
        # Downloaded: its voices are offered to each companion, and a line is said by Kokoro sentence by sentence
        assert ("kokoro:jf_alpha", "Kokoro Alpha") in [
            (c.id, c.name) for c in voice_choices(speaker.voices, "ja", espeak=speaker.espeak)]
        rendered: list[tuple[str, float]] = []
        render = speaker._render_kokoro

        def timed(chunk: str, path: Path, **tuning: Any) -> float:
            seconds = render(chunk, path, **tuning)
            rendered.append((chunk, time.monotonic()))
            return seconds

        speaker._render_kokoro = timed  # type: ignore[method-assign]
        played.clear()
        asked = time.monotonic()
        line = await speaker.speak(Utterance("はい。行きましょう。", voice="kokoro:jf_alpha;rate=170",
                                             speaker_id="hina"))
        assert (line.success, line.voice) == (True, "kokoro:jf_alpha"), line
        assert "Kokoro" not in speaker.status.reason  # the notice went with the download
        assert [chunk for chunk, _ in rendered] == ["はい。", "行きましょう。"]
        starts = [(at, rate) for at, path, rate in played if path is not None]
        assert [rate for _, rate in starts] == [24000, 24000]  # Kokoro's audio, one WAV per sentence
        assert starts[0][0] < rendered[1][1]  # the first audio did not wait for the whole line
        assert 0.8 < line.duration_s < 5.0
        # A card's rate is Kokoro's speed
        slow = await speaker.speak(Utterance("はい。", voice="kokoro:jf_alpha;rate=110", speaker_id="hina"))
        quick = await speaker.speak(Utterance("はい。", voice="kokoro:jf_alpha;rate=220", speaker_id="hina"))
        assert quick.voice == slow.voice == "kokoro:jf_alpha"
        assert quick.duration_s < 0.75 * slow.duration_s, (quick.duration_s, slow.duration_s)
        # An interruption stops a line at once, while it plays and the next sentence renders
        loop = asyncio.get_running_loop()
        heard = asyncio.Event()
        speaker.playback_listeners.append(lambda path: path is not None and loop.call_soon_threadsafe(heard.set))
        saying = asyncio.create_task(speaker.speak(Utterance("図書館で古い地図を調べてみましょう。そうしましょう。",
                                                             voice="kokoro:jf_alpha", speaker_id="hina")))
        async with asyncio.timeout(20):
            await heard.wait()
        stopped = time.monotonic()
        speaker.interrupt()
        cut = await saying
        assert cut.interrupted
        assert time.monotonic() - stopped < 0.5
        assert time.monotonic() - asked < 60
    finally:
        await speaker.stop()
