"""VOICEVOX-compatible engines: listing their voices, synthesis with the engine's own mora timing, the answers of a
hostile or broken engine, and finding engines as model servers are found.

The engines cannot be installed here, so the engine is companions/testing/voicevox_engine.py: a real HTTP server on
loopback built from VOICEVOX ENGINE's published API (VOICEVOX/voicevox_engine: its routers, models, error handlers
and e2e snapshots), quirks included: ``/version`` is a bare JSON string, ``/speakers`` lists singing styles too, the
style id is the ``speaker`` query parameter, an unknown style is 422 ``{"message"}`` (not 404), a request that does
not validate is FastAPI's 422 ``{"detail": [...]}``, and AivisSpeech's queries carry extra fields and placeholder
mora lengths. Its WAV is a tone per mora, timed as the engine times a query.
"""

from __future__ import annotations

import asyncio
import time
import wave
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from app.devices.voicevox import VoicevoxEngine, VoicevoxProblem, mora_timings, parse_speakers
from app.devices.voicevox_discovery import KNOWN_ENGINES, EngineCandidate, candidates, find_engines, probe
from companions.testing.openai_server import OpenAITestServer
from companions.testing.voicevox_engine import VoicevoxTestEngine

QUESTION = "今日は、いい天気ですか？"


@pytest.fixture
async def double() -> AsyncIterator[VoicevoxTestEngine]:
    async with VoicevoxTestEngine() as engine:
        yield engine


def _levels(path: Path, rate_step: float = 0.01) -> list[bool]:
    """Whether each ``rate_step`` seconds of ``path`` is sounding (a tone) or silent."""
    with wave.open(str(path), "rb") as wav:
        rate, data = wav.getframerate(), wav.readframes(wav.getnframes())
    samples = memoryview(data).cast("h")
    step = int(rate * rate_step)
    return [max((abs(s) for s in samples[i:i + step]), default=0) > 1000 for i in range(0, len(samples), step)]


async def test_the_double_answers_as_voicevox_engine_does(double: VoicevoxTestEngine) -> None:
    """The double's own quirks, asserted against the engine's snapshots: a test of the client is then a test
    against what a real engine says."""
    async with httpx.AsyncClient(base_url=double.base_url) as http:
        assert (await http.get("/version")).json() == "0.25.0"
        missing = await http.post("/audio_query", params={"speaker": 3})
        assert missing.status_code == 422
        assert missing.json()["detail"][0]["loc"] == ["query", "text"]
        unknown = await http.post("/audio_query", params={"text": "あ", "speaker": -1024})
        assert (unknown.status_code, unknown.json()) == (422, {"message": "指定されたスタイルが見つかりませんでした。"})
        singing = await http.post("/audio_query", params={"text": "あ", "speaker": 6000})
        assert singing.json() == {"message": "指定されたスタイルはこの機能をサポートしていません。"}
        assert (await http.get("/audio_query")).status_code == 405


async def test_the_voices_listed_are_those_that_can_talk(double: VoicevoxTestEngine) -> None:
    engine = VoicevoxEngine(double.base_url)
    styles = await asyncio.to_thread(engine.styles)  # the client blocks: off the loop the double serves on
    engine.close()
    assert [(s.speaker, s.name, s.id) for s in styles] == [
        ("四国めたん", "ノーマル", 2), ("四国めたん", "あまあま", 0), ("ずんだもん", "ノーマル", 3),
        ("ずんだもん", "ささやき", 22)]  # the singing style 6000 is listed by the engine, refused by /audio_query


async def test_a_line_is_said_with_the_engines_own_mora_timing(double: VoicevoxTestEngine, tmp_path: Path) -> None:
    engine = VoicevoxEngine(double.base_url)
    rendered = await asyncio.to_thread(engine.render, QUESTION, 3, tmp_path / "line.wav")
    fast = await asyncio.to_thread(engine.render, QUESTION, 3, tmp_path / "fast.wav", speed=2.0)
    engine.close()
    assert [r.path for r in double.requests if r.method == "POST"] == ["/audio_query", "/synthesis"] * 2
    assert double.requests[1].params == {"speaker": "3"}
    with wave.open(str(rendered.path), "rb") as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 24000)
    assert [m.text for m in rendered.moras] == [*"今日は", *"いい天気ですか", "ー"]  # a question rises at its end
    # The tones are where the timing says: each mora heard, the pause after 、and the silence before are silent.
    levels = _levels(rendered.path)
    for mora in rendered.moras:
        assert all(levels[round(mora.start_s * 100) + 1:round(mora.end_s * 100) - 1]), mora
    pause = (rendered.moras[2].end_s, rendered.moras[3].start_s)
    assert pause[1] - pause[0] == pytest.approx(0.35, abs=0.011)  # the phrase's pause_mora
    assert not any(levels[round(pause[0] * 100) + 1:round(pause[1] * 100) - 1])
    assert rendered.moras[0].start_s == pytest.approx(0.1, abs=0.011)  # prePhonemeLength
    # speedScale 2: everything, silences included, half as long (each phoneme still rounded to a frame)
    assert fast.duration_s == pytest.approx(rendered.duration_s / 2, rel=0.1)
    assert fast.moras[-1].end_s == pytest.approx(rendered.moras[-1].end_s / 2, rel=0.1)
    assert fast.duration_s == pytest.approx(fast.moras[-1].end_s + 0.05, abs=0.011)  # the WAV is as timed


async def test_aivisspeech_timing_is_fitted_to_its_audio_and_its_own_fields_go_back(tmp_path: Path) -> None:
    async with VoicevoxTestEngine(profile="aivisspeech") as double:
        engine = VoicevoxEngine(double.base_url, "AivisSpeech")
        style = (await asyncio.to_thread(engine.styles))[0].id
        rendered = await asyncio.to_thread(engine.render, "こんにちは", style, tmp_path / "a.wav")
        engine.close()
        sent = double.requests[-1]
    assert style == 1431611904  # 32-bit style ids
    assert b'"tempoDynamicsScale": 1.0' in sent.body  # the engine's own field, sent back as it wrote it
    assert rendered.duration_s == pytest.approx(0.2 + 5 * 0.12, abs=0.03)
    # Its query says every mora lasts 0.0 s; the timing spreads the moras over the audio instead
    assert rendered.moras[-1].end_s == pytest.approx(rendered.duration_s, abs=0.01)
    assert all(m.end_s > m.start_s for m in rendered.moras)


@pytest.mark.parametrize(("broken", "words"), [
    ("huge", "answered"), ("not_wav", "not a 16-bit PCM WAV"), ("bad_json", "not JSON"), ("nan", "not valid")])
async def test_a_hostile_engines_answers_are_refused_with_a_reason(tmp_path: Path, broken: str, words: str) -> None:
    async with VoicevoxTestEngine(broken=broken) as double:
        engine = VoicevoxEngine(double.base_url)
        started = time.monotonic()
        with pytest.raises(VoicevoxProblem) as raised:
            await asyncio.to_thread(engine.render, "こんにちは", 3, tmp_path / "x.wav")
        engine.close()
    assert raised.value.kind == "bad_answer"
    assert words in str(raised.value)
    assert time.monotonic() - started < 2.0  # 64 MB announced are refused, not read
    assert not (tmp_path / "x.wav").exists()


async def test_an_unknown_voice_is_refused_in_the_engines_words(double: VoicevoxTestEngine, tmp_path: Path) -> None:
    engine = VoicevoxEngine(double.base_url)
    with pytest.raises(VoicevoxProblem) as raised:
        await asyncio.to_thread(engine.render, "こんにちは", 99, tmp_path / "x.wav")
    engine.close()
    assert raised.value.kind == "refused"
    assert "HTTP 422: 指定されたスタイルが見つかりませんでした。" in str(raised.value)


async def test_engines_are_found_like_model_servers(double: VoicevoxTestEngine) -> None:
    async with OpenAITestServer() as model_server:  # something else on a port: not an engine
        found = await find_engines([double.base_url, model_server.base_url.removesuffix("/v1"),
                                    "http://127.0.0.1:9"], find_local=False)
    usable = found.usable
    assert [(e.base_url, e.version, len(e.styles)) for e in usable] == [(double.base_url, "0.25.0", 4)]
    problems = {e.base_url: e.problem for e in found.engines if not e.usable}
    assert problems.pop("http://127.0.0.1:9") == "nothing answers at http://127.0.0.1:9"
    (other,) = problems.values()  # the user's address where something else answers says why it is no engine
    assert other.endswith("refused /version: HTTP 404")
    # Found automatically: this machine's VOICEVOX and AivisSpeech only; an address elsewhere is the user's say.
    assert [c.base_url for c in candidates()] == ["http://127.0.0.1:50021", "http://127.0.0.1:10101"]
    assert all(not c.given for c in KNOWN_ENGINES)
    assert [c.given for c in candidates(["192.168.1.20:50021"])] == [False, False, True]
    assert await probe(EngineCandidate("VOICEVOX", "http://127.0.0.1:9")) is None  # a guess: nothing, no error


def test_mora_timing_follows_the_engines_rounding_and_pauses() -> None:
    query = {"accent_phrases": [
        {"moras": [{"text": "ア", "vowel": "a", "vowel_length": 0.1, "consonant_length": None, "pitch": 5.0}],
         "pause_mora": {"text": "、", "vowel": "pau", "vowel_length": 0.3}, "is_interrogative": False},
        {"moras": [{"text": "カ", "consonant": "k", "consonant_length": 0.05, "vowel": "a", "vowel_length": 0.1,
                    "pitch": 5.0}], "pause_mora": None, "is_interrogative": False}],
        "speedScale": 1.0, "prePhonemeLength": 0.1, "postPhonemeLength": 0.1, "pauseLength": 0.5,
        "pauseLengthScale": 2.0}
    moras, total = mora_timings(query)
    frame = 1 / 93.75
    assert moras[0].start_s == pytest.approx(9 * frame)  # 0.1 s is 9.375 frames: rounded to 9
    assert moras[1].start_s - moras[0].end_s == pytest.approx(94 * frame)  # pauseLength 0.5 replaces 0.3, x2
    assert moras[1].end_s - moras[1].start_s == pytest.approx((5 + 9) * frame)  # consonant and vowel each rounded
    assert total == pytest.approx(moras[1].end_s + 9 * frame)


def test_a_speaker_list_from_anywhere_is_read_entry_by_entry() -> None:
    listed = parse_speakers([
        {"name": "ずんだ\u202eもん\x07", "speaker_uuid": "u", "styles": [
            {"name": "ノーマル", "id": 3}, {"name": "bool", "id": True}, {"name": "big", "id": 2**40},
            {"name": "text", "id": "4"}, {"name": "again", "id": 3}, {"name": "歌", "id": 9, "type": "sing"}]},
        "not a speaker", {"name": "no styles"}, {"name": "x" * 500, "styles": [{"id": 7, "name": None}]}])
    assert [(s.speaker, s.name, s.id) for s in listed] == [("ずんだもん", "ノーマル", 3), ("x" * 120, "?", 7)]
    with pytest.raises(VoicevoxProblem):
        parse_speakers({"speakers": []})
