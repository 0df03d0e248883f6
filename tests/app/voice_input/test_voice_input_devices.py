"""Voice input's adapters for real: PocketSphinx recognizes espeak-ng's speech offline, the file
microphone plays in real time, the downloaded model is checked before it is kept, and no microphone is a state."""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from app.voice_input import recognizer_models
from app.voice_input.microphone import FileMicrophone, SoundDeviceMicrophone, input_devices, read_pcm16k
from app.voice_input.recognizer_models import DownloadFailed, SpeechModel, download, installed, model_path
from app.voice_input.recognizers import FasterWhisperRecognizer, PocketSphinxRecognizer, WhisperRecognizer
from app.voice_input.wiring import spoken_names
from companions.voice_input.audio import FRAME_S, AudioFrame, MicrophoneUnavailable
from companions.voice_input.recognition import RecognizerUnavailable
from tests.app.llm.hf_host import HuggingFaceLikeHost, hugging_face_like_host
from tests.app.speech_audio import clip


def test_pocketsphinx_recognizes_espeak_speech_to_the_words_it_said(tmp_path: Path) -> None:
    recognizer = PocketSphinxRecognizer()  # its model is inside the wheel: nothing to download
    recognizer.prepare()
    spoken = clip("what is the weather like tomorrow", tmp_path / "weather.wav")
    session = recognizer.begin()
    pcm = read_pcm16k(spoken.path)
    partials = []
    for offset in range(0, len(pcm), 6400):  # as the microphone delivers it, 200 ms at a time
        session.accept(pcm[offset:offset + 6400])
        partials.append(session.partial())
    heard = session.finish()
    assert (heard.text, heard.certainty) == ("what is the weather like tomorrow", "sure")
    assert any(p and p != "what is the weather like tomorrow" for p in partials)  # words came as it spoke


async def test_the_file_microphone_delivers_at_the_pace_of_the_clock(tmp_path: Path) -> None:
    spoken = clip("good morning", tmp_path / "morning.wav", before_s=0.2, after_s=0.2)
    microphone = FileMicrophone(spoken.path)
    got: list[tuple[AudioFrame, float]] = []
    done = threading.Event()

    def deliver(frame: AudioFrame) -> None:
        got.append((frame, time.monotonic()))
        if len(got) == 50:
            done.set()

    began = time.monotonic()
    await microphone.open(deliver)
    assert done.wait(10)
    await microphone.close()
    assert time.monotonic() - began >= 50 * FRAME_S  # one second of audio took a second
    assert all(b.at - a.at == pytest.approx(FRAME_S) for (a, _), (b, _) in itertools.pairwise(got))
    assert all(arrived >= frame.end - 0.001 for frame, arrived in got)  # never before it was "captured"


async def test_no_microphone_is_a_clear_reason(tmp_path: Path) -> None:
    if input_devices():
        pytest.skip("this machine has a microphone")
    with pytest.raises(MicrophoneUnavailable, match="no microphone"):
        await SoundDeviceMicrophone().open(lambda frame: None)
    with pytest.raises(MicrophoneUnavailable, match="cannot read"):
        await FileMicrophone(tmp_path / "missing.wav").open(lambda frame: None)


# -- the downloaded model ------------------------------------------------------------------------------------------

def _ggml(host: HuggingFaceLikeHost, path: Path, sha1: str | None = None) -> SpeechModel:
    """``path`` on ``host`` as whisper.cpp's Hugging Face repository serves its ggml files."""
    host.host(path)
    model = recognizer_models.MODELS["whisper-tiny"].on_host(host.url)
    return replace(model, files=(replace(model.files[0], size=path.stat().st_size),),
                   sha1=sha1 or hashlib.sha1(path.read_bytes(), usedforsecurity=False).hexdigest())


def test_the_model_is_downloaded_with_progress_and_kept_once_its_checksums_match(tmp_path: Path) -> None:
    body = tmp_path / "host" / "ggml-tiny.bin"
    body.parent.mkdir()
    body.write_bytes(recognizer_models.WHISPER_MAGIC + bytes(range(256)) * 20_000)
    seen: list[tuple[int, int]] = []
    with hugging_face_like_host() as host:
        model = _ggml(host, body)
        path = download(model, tmp_path, progress=lambda done, total: seen.append((done, total)))
        assert host.requests[0][1] == "/ggerganov/whisper.cpp/resolve/main/ggml-tiny.bin"  # app/downloads.py's
    assert path == model_path(tmp_path, model)
    assert path.read_bytes() == body.read_bytes()
    assert installed(tmp_path, model)
    assert seen[-1] == (model.size, model.size)


def test_a_file_that_is_not_the_published_one_is_not_kept(tmp_path: Path) -> None:
    body = tmp_path / "host" / "ggml-tiny.bin"
    body.parent.mkdir()
    body.write_bytes(recognizer_models.WHISPER_MAGIC + b"x" * 10_000)
    with hugging_face_like_host() as host:
        model = _ggml(host, body, sha1="0" * 40)  # whisper.cpp publishes another SHA-1 than the host's file has
        with pytest.raises(DownloadFailed, match="SHA-1"):
            download(model, tmp_path)
        assert not model_path(tmp_path, model).exists()
        host.host(body, sha256="0" * 64)  # the host claims a sha256 the bytes do not have
        with pytest.raises(DownloadFailed, match="sha256"):
            download(replace(model, sha1=None), tmp_path)
        assert not list(model_path(tmp_path, model).parent.iterdir())  # no partial file left either


def test_a_cancelled_download_continues_where_it_stopped(tmp_path: Path) -> None:
    body = tmp_path / "host" / "ggml-tiny.bin"
    body.parent.mkdir()
    body.write_bytes(recognizer_models.WHISPER_MAGIC + bytes(range(256)) * 4_000)
    with hugging_face_like_host() as host:
        model = _ggml(host, body)
        host.files[body.name].rate = 400_000  # ~2.5 s for the file: cancelled after a part came
        began = time.monotonic()
        with pytest.raises(DownloadFailed, match="cancelled"):
            download(model, tmp_path, cancelled=lambda: time.monotonic() - began > 0.5)
        host.files[body.name].rate = None
        download(model, tmp_path)
        assert host.gets(body.name)[-1]["range"].startswith("bytes=")  # the rest, not the whole file again
    assert model_path(tmp_path, model).read_bytes() == body.read_bytes()


def test_whisper_refuses_a_model_it_does_not_have_or_that_is_no_model(tmp_path: Path) -> None:
    recognizer = WhisperRecognizer("whisper-tiny", tmp_path)
    with pytest.raises(RecognizerUnavailable, match="not downloaded yet"):
        recognizer.prepare()
    model = recognizer_models.MODELS["whisper-tiny"]
    path = model_path(tmp_path, model)
    path.parent.mkdir(parents=True)
    with path.open("wb") as file:  # the right size, but not a ggml file (whisper.cpp would load it and crash later)
        file.truncate(model.size)
    with pytest.raises(RecognizerUnavailable, match=r"not a whisper\.cpp model"):
        recognizer.prepare()


def test_whisper_is_prompted_with_the_companions_and_the_user_s_names_in_the_language_heard(tmp_path: Path) -> None:
    recognizer = FasterWhisperRecognizer("faster-whisper-base", tmp_path)
    recognizer.use_words(spoken_names(["akari", "hina", "souta"], "Kenji"))
    assert recognizer.prompt("en") == "Akari, Hina, Souta, Kenji."
    assert recognizer.prompt("ja") == "アカリ、ヒナ、ソウタ、ケンジ。"
    assert spoken_names(["akari"], "user") == ["akari"]  # the default is no name


def test_whisper_is_pinned_to_the_host_s_files_and_the_test_copy_is_laid_out_as_the_host_lays_it_out() -> None:
    from tests.app.voice_input.whisper_files import test_copy, whisper_model

    base, small = recognizer_models.MODELS["faster-whisper-base"], recognizer_models.MODELS["faster-whisper-small"]
    names = ["model.bin", "config.json", "tokenizer.json", "vocabulary.txt"]
    assert [f.file for f in base.files] == [f.file for f in small.files] == [f.file for f in test_copy().files] \
        == names == list(whisper_model.FILES)
    for model, revision in ((base, recognizer_models.FASTER_WHISPER_BASE_REVISION),
                            (small, recognizer_models.FASTER_WHISPER_SMALL_REVISION)):
        assert [f.url for f in model.files] \
            == [f"https://huggingface.co/Systran/{model.folder}/resolve/{revision}/{name}" for name in names]
    on_host = {f.file: (f.size, f.sha256) for f in base.files}
    # the two small files of the test copy are the host's bytes; its model.bin is not, and the host's pins say so
    assert {n: whisper_model.FILES[n] for n in ("config.json", "vocabulary.txt")} \
        == {n: on_host[n] for n in ("config.json", "vocabulary.txt")}
    assert on_host["model.bin"][0] != whisper_model.FILES["model.bin"][0]
    assert (base.megabytes, small.megabytes) == (148, 486)


def test_bytes_other_than_the_host_s_are_refused_before_they_are_kept(tmp_path: Path) -> None:
    from tests.app.voice_input.whisper_files import hosted_whisper_base

    with hugging_face_like_host() as host:
        hosted_whisper_base(host)  # the test copy: its model.bin is not Systran's
        with pytest.raises(DownloadFailed):
            download(recognizer_models.MODELS["faster-whisper-base"].on_host(host.url), tmp_path)
    folder = model_path(tmp_path, recognizer_models.MODELS["faster-whisper-base"])
    assert not (folder / "model.bin").exists()


def test_the_speed_probe_measures_one_core_and_the_offer_is_small_only_on_a_fast_enough_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reading = recognizer_models.speed_probe(seconds=0.12)
    assert reading > 1.0  # GFLOP/s of one core: even a slow one does more
    readings = iter([recognizer_models.SMALL_FROM_GFLOPS, recognizer_models.SMALL_FROM_GFLOPS / 2])
    monkeypatch.setattr(recognizer_models, "speed_probe", lambda: next(readings))
    for expected in ("faster-whisper-small", "faster-whisper-base"):
        speed = recognizer_models.SpeedReading()  # a new run's
        monkeypatch.setattr(recognizer_models, "machine_speed", speed)
        began = time.perf_counter()
        assert recognizer_models.recommended().choice == "faster-whisper-base"  # until the probe answers
        assert time.perf_counter() - began < 0.1  # nobody waits for it: the window asks on its own thread
        deadline = time.monotonic() + 10
        while speed.known() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert recognizer_models.recommended().choice == expected
        assert recognizer_models.recommended().choice == expected  # measured once a run, not at every offer
    monkeypatch.delitem(recognizer_models.MODELS, "faster-whisper-small")  # where small is not offered
    assert recognizer_models.suggested_size(10 * recognizer_models.SMALL_FROM_GFLOPS) == "faster-whisper-base"
