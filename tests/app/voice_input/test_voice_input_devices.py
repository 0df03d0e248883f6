"""Voice input's adapters for real: PocketSphinx recognizes espeak-ng's speech offline, the file
microphone plays in real time, the downloaded model is checked before it is kept, and no microphone is a state."""

from __future__ import annotations

import hashlib
import http.server
import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from app.voice_input import recognizer_models
from app.voice_input.microphone import FileMicrophone, SoundDeviceMicrophone, input_devices, read_pcm16k
from app.voice_input.recognizer_models import DownloadFailed, SpeechModel, download, installed, model_path
from app.voice_input.recognizers import PocketSphinxRecognizer, WhisperRecognizer
from companions.voice_input.audio import FRAME_S, AudioFrame, MicrophoneUnavailable
from companions.voice_input.recognition import RecognizerUnavailable
from tests.app.speech_audio import clip
from tests.conftest import serving


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

class _Files(http.server.BaseHTTPRequestHandler):
    files: ClassVar[dict[str, bytes]] = {}
    lengths: ClassVar[dict[str, int]] = {}

    def do_GET(self) -> None:
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(self.lengths.get(self.path, len(body))))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    with serving(httpd):
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    _Files.files.clear()
    _Files.lengths.clear()


def _model(body: bytes, sha1: str | None = None) -> SpeechModel:
    return SpeechModel("whisper-tiny", "ggml-tiny.bin", len(body),
                       sha1 or hashlib.sha1(body, usedforsecurity=False).hexdigest(), "unused")


def test_the_model_is_downloaded_with_progress_and_kept_once_its_checksum_matches(
        tmp_path: Path, server: str) -> None:
    body = recognizer_models.WHISPER_MAGIC + bytes(range(256)) * 1000
    _Files.files["/ggml-tiny.bin"] = body
    model = _model(body)
    seen: list[tuple[int, int]] = []
    path = download(model, tmp_path, progress=lambda done, total: seen.append((done, total)),
                    url=server + "/ggml-tiny.bin")
    assert path == model_path(tmp_path, model)
    assert path.read_bytes() == body
    assert installed(tmp_path, model)
    assert seen[-1] == (len(body), len(body))
    assert len(seen) > 1  # progress as it came, not once at the end


def test_a_file_that_is_not_the_published_one_is_not_kept(tmp_path: Path, server: str) -> None:
    body = recognizer_models.WHISPER_MAGIC + b"x" * 10_000
    _Files.files["/ggml-tiny.bin"] = body
    model = _model(body, sha1="0" * 40)  # what the catalog says differs from what the server sends
    with pytest.raises(DownloadFailed, match="checksum"):
        download(model, tmp_path, url=server + "/ggml-tiny.bin")
    assert not model_path(tmp_path, model).exists()
    assert not list(model_path(tmp_path, model).parent.iterdir())  # no partial file left either


def test_a_download_of_the_wrong_size_or_from_nowhere_says_why(tmp_path: Path, server: str) -> None:
    body = b"short"
    _Files.files["/ggml-tiny.bin"] = body
    with pytest.raises(DownloadFailed, match="not the expected file"):
        download(_model(body * 3), tmp_path, url=server + "/ggml-tiny.bin")
    with pytest.raises(DownloadFailed, match="download failed"):
        download(_model(body), tmp_path, url=server + "/missing.bin")
    _Files.files["/big.bin"] = b"y" * 300_000
    with pytest.raises(DownloadFailed, match="cancelled"):
        download(_model(b"y" * 300_000), tmp_path, url=server + "/big.bin", cancelled=lambda: True)


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
