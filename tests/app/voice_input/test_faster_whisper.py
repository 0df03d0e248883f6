"""Ears that understand Japanese: Whisper base through faster-whisper, downloaded from the
loopback host double answering as Hugging Face (app/downloads.py, the real download code), hears Japanese and
English speech played into the file microphone, spells the companions' names, and leaves speech in a language the
settings do not accept undecoded and unsent; what was said before a pause is decoded during the silence that ends
it. The real weights (scripts/whisper_model.py); each decoding is ~0.3-1 s on 2 busy cores, so these run in the slow
lane."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import jaconv
import pytest

from app.voice_input import recognizer_models, recognizers
from app.voice_input.microphone import read_pcm16k
from app.voice_input.recognizer_models import download, installed, model_path
from app.voice_input.recognizers import FasterWhisperRecognizer, build_recognizer
from tests.app.llm.hf_host import hugging_face_like_host
from tests.app.speech_audio import clip
from tests.app.voice_input.heard_speech import hear
from tests.app.voice_input.spoken_japanese import japanese_clip
from tests.app.voice_input.whisper_files import hosted_whisper_base, installed_whisper_base

pytestmark = pytest.mark.slow  # Whisper keeps both cores busy for a second or two an utterance


async def test_whisper_base_downloads_from_its_host_and_hears_japanese_with_a_companion_s_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, int]] = []
    with hugging_face_like_host() as host:
        model = hosted_whisper_base(host)
        monkeypatch.setitem(recognizer_models.MODELS, "faster-whisper-base", model)
        path = await asyncio.to_thread(download, model, tmp_path,
                                       progress=lambda done, total: seen.append((done, total)))
        asked = [p for method, p, _ in host.requests if method == "HEAD"]
    assert asked[0] == "/Systran/faster-whisper-base/resolve/ebe41f70d5b6dfa9166e2c581c45c9c0cfc57b66/model.bin"
    assert path == model_path(tmp_path, model)
    assert installed(tmp_path, model)
    assert seen[-1] == (model.size, model.size)
    assert len(seen) > 2
    recognizer = build_recognizer("faster-whisper-base", tmp_path, "auto")
    assert isinstance(recognizer, FasterWhisperRecognizer)
    heard = await hear(recognizer, japanese_clip("あかりさんは元気ですか", tmp_path / "ja.wav", before_s=0.3,
                                                 after_s=1.0),
                       words=("akari", "hina", "souta"))
    assert len(heard.outcomes) == 1, heard
    outcome, _, words = heard.outcomes[0]
    assert outcome == "sent"
    assert "あかり" in jaconv.kata2hira(words), words
    assert "元気ですか" in words


async def test_speech_in_a_language_the_settings_do_not_accept_is_never_decoded_nor_sent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = installed_whisper_base(tmp_path / "data", monkeypatch)
    english_only = FasterWhisperRecognizer("faster-whisper-base", data_dir, "en")
    heard = await hear(english_only, japanese_clip("今日はいい天気ですね", tmp_path / "ja.wav", before_s=0.3,
                                                   after_s=1.0))
    assert [outcome for outcome, _, _ in heard.outcomes] == ["not understood"]
    assert english_only.heard["ja"] > 0.5  # Whisper heard Japanese, and nothing was decoded as English
    heard = await hear(english_only, clip("souta, which book are you reading", tmp_path / "en.wav", before_s=0.3,
                                          after_s=1.0),
                       words=("akari", "hina", "souta"))
    assert [outcome for outcome, _, _ in heard.outcomes] == ["sent"]
    assert heard.outcomes[0][2].lower().startswith("souta, which book are you reading"), heard


def test_what_was_said_before_a_pause_is_decoded_during_the_silence_and_is_the_final_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recognizer = FasterWhisperRecognizer("faster-whisper-base", installed_whisper_base(tmp_path, monkeypatch))
    spoken = read_pcm16k(clip("the children are playing in the park", tmp_path / "en.wav", before_s=0.3,
                              after_s=0.2).path)
    session = recognizer.begin()
    session.accept(spoken)
    session.pause()  # the user stopped: the end-of-speech silence runs
    began = time.perf_counter()
    final = session.finish()  # the silence ended the utterance: nothing new came
    assert time.perf_counter() - began < 0.01  # no second decoding: the words go out when the silence ends
    assert (final.text, final.certainty) == ("The children are playing in the park.", "sure")
    session = recognizer.begin()
    session.accept(spoken[: len(spoken) // 2])
    session.pause()
    session.accept(spoken[len(spoken) // 2:])  # the user spoke on: the rest is heard too
    assert session.finish().text == "The children are playing in the park."


def test_words_in_a_language_that_did_not_stand_out_wait_in_the_box(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recognizer = FasterWhisperRecognizer("faster-whisper-base", installed_whisper_base(tmp_path, monkeypatch))
    recognizer.prepare()
    # Two languages in one breath: espeak's "let us play a game", then Mei's "はい". Whisper heard English 0.48 and
    # Japanese 0.30 (espeak's English alone stood out on this machine's packages: 0.50 against 0.09).
    english = read_pcm16k(clip("let us play a game", tmp_path / "en.wav", before_s=0.3, after_s=0.1).path)
    spoken = english + read_pcm16k(japanese_clip("はい", tmp_path / "ja.wav", before_s=0.1, after_s=0.3).path)
    heard = recognizer.recognize(spoken)
    assert heard.certainty == "unsure", (heard, recognizer.heard)
    ja, en = recognizer.heard["ja"], recognizer.heard["en"]
    assert max(ja, en) < recognizers.LANGUAGE_MARGIN * min(ja, en)  # neither stood out: nothing goes out
