"""Open JTalk's Mei through the real pyopenjtalk-plus wheel (its dictionary and voice inside), writing real WAV files;
and the voice a ``speak`` query names, as the speaker reads it."""

from __future__ import annotations

import wave
from pathlib import Path

import pyopenjtalk
import pytest

from app.devices.openjtalk_voice import MEI_ALL_PASS, OpenJTalkVoice, _with_all_pass
from app.devices.voice_spec import VoiceSpec, parse_voice_spec
from tests.app.devices.voice_measures import median_pitch, seconds, spectral_centroid

LINE = "今日は図書館で古い地図を見つけました。"


@pytest.fixture(scope="module")
def mei(tmp_path_factory: pytest.TempPathFactory) -> OpenJTalkVoice:
    voice = OpenJTalkVoice(tmp_path_factory.mktemp("mei"))
    voice.load()
    return voice


def test_mei_writes_a_japanese_line_as_a_wav_file(mei: OpenJTalkVoice, tmp_path: Path) -> None:
    path = tmp_path / "line.wav"
    duration = mei.write_wav(LINE, path)
    with wave.open(str(path), "rb") as wav:
        assert (wav.getframerate(), wav.getsampwidth(), wav.getnchannels()) == (48000, 2, 1)
    assert 1.5 < duration < 5.0  # nineteen characters said as words
    assert seconds(path) == pytest.approx(duration)
    assert path.stat().st_mode & 0o077 == 0  # what a companion said is the user's: 0600


def test_kanji_are_read_by_the_dictionary_as_their_kana_reading_is(mei: OpenJTalkVoice, tmp_path: Path) -> None:
    """espeak-ng said "Chinese letter" for every kanji; Open JTalk reads them: the kanji line and its kana reading
    sound the same length."""
    kanji = mei.write_wav("今日は東京へ行きます。", tmp_path / "kanji.wav")
    kana = mei.write_wav("きょうはとうきょうへいきます。", tmp_path / "kana.wav")
    assert kanji == pytest.approx(kana, rel=0.1)
    assert pyopenjtalk.g2p("今日は東京へ行きます。", kana=True) == "キョーワトーキョーエイキマス。"


def test_speed_half_tone_and_all_pass_change_what_is_heard(mei: OpenJTalkVoice, tmp_path: Path) -> None:
    plain = tmp_path / "plain.wav"
    mei.write_wav(LINE, plain)
    quick = mei.write_wav(LINE, tmp_path / "quick.wav", speed=1.3)
    assert quick < seconds(plain) / 1.2
    low = tmp_path / "low.wav"
    mei.write_wav(LINE, low, half_tone=-7)
    assert median_pitch(low) < median_pitch(plain) * 0.75  # seven semitones: x0.67
    large = tmp_path / "large.wav"
    mei.write_wav(LINE, large, all_pass=0.62)
    small = tmp_path / "small.wav"
    mei.write_wav(LINE, small, all_pass=0.48)
    # The all-pass constant warps the spectrum: a larger one moves its energy down, a smaller one up.
    assert spectral_centroid(large) < spectral_centroid(plain) < spectral_centroid(small)
    assert median_pitch(large) == pytest.approx(median_pitch(plain), rel=0.1)  # the pitch stays


def test_the_all_pass_constant_is_rewritten_in_place_in_mei_s_voice_file() -> None:
    mei = Path(pyopenjtalk.DEFAULT_HTS_VOICE.decode()).read_bytes()
    assert f"ALPHA={MEI_ALL_PASS:.2f}".encode() in mei  # the layout this wheel's voice file has
    tuned = _with_all_pass(mei, 0.6)
    assert tuned is not None
    assert len(tuned) == len(mei)  # byte positions of the voice's data unchanged
    assert b"ALPHA=0.60" in tuned
    assert _with_all_pass(b"no header here", 0.6) is None


def test_a_voice_names_its_engine_and_carries_the_card_s_tuning() -> None:
    spec = parse_voice_spec("ja;rate=185;half_tone=2.5;all_pass=0.52")
    assert spec == VoiceSpec("ja", None, 185, 2.5, 0.52)
    assert not spec.names_system_voice
    assert not spec.names_openjtalk
    assert parse_voice_spec("openjtalk").names_openjtalk
    assert parse_voice_spec("openjtalk").system_voice is None
    assert parse_voice_spec("jpx/ja+f3").names_system_voice  # a system voice id, chosen in the settings
    assert parse_voice_spec("en-us+f3").system_voice == "en-us+f3"
    assert not parse_voice_spec("en-us+f3").names_system_voice  # a language: the engine of the line's language
    assert parse_voice_spec("ja;engine=system").names_system_voice
    assert parse_voice_spec(None) == VoiceSpec()
    # From anywhere: nonsense is ignored or clamped, never an error.
    assert parse_voice_spec("ja;rate=9000;half_tone=x;all_pass=-1;colour=red") == VoiceSpec("ja", rate=400,
                                                                                             all_pass=0.0)
