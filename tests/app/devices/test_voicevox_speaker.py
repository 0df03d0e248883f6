"""A companion whose card picks a VOICEVOX-compatible engine is heard in that engine's voice: each sentence
synthesised while the one before it plays, the chat's highlight on with the engine's audio (not while it
synthesises), the engine's mora timing published as each sentence starts; and an engine that is gone leaves the
line to the default voice, with a notice, never a traceback.

The engine is companions/testing/voicevox_engine.py (VOICEVOX ENGINE's own API, quirks included: see
tests/app/devices/test_voicevox.py), made to take half of each sentence's length to synthesise it
(``synthesis_rtf=0.5``), and the sound device a player that takes as long as the WAV lasts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

import app.devices.speaker as speaker_module
from app.devices.speaker import Pyttsx3Speaker
from app.devices.voices import voice_choices
from app.devices.voicevox import MorasSpoken
from companions.cards.card import Voice
from companions.devices.ports import DeviceStatus, SpeakingChanged, Utterance
from companions.testing.voicevox_engine import VoicevoxTestEngine
from companions.wire.bus import BusItem, InProcessBus
from tests.app.devices.stand_in_player import PLAYER, Played

LINE = "はい、わかりました。そうですね。いきましょう。"


async def _found(speaker: Pyttsx3Speaker) -> None:
    """Waits for the engines' search the start left running in the background."""
    async with asyncio.timeout(5):
        await speaker.engines_searched()


def _events(bus: InProcessBus) -> list[tuple[float, BusItem]]:
    seen: list[tuple[float, BusItem]] = []
    bus.subscribe("events", lambda item: seen.append((time.monotonic(), item)), name="test", direct=True)
    return seen


async def test_a_card_picks_voicevox_and_each_sentence_is_synthesised_while_the_last_plays(
        bus: InProcessBus) -> None:
    seen = _events(bus)
    async with VoicevoxTestEngine(synthesis_rtf=0.5) as engine:
        speaker = Pyttsx3Speaker(bus, player=PLAYER, engine_urls=[engine.base_url])
        speaker.openjtalk_enabled = False
        played = Played()
        speaker.playback_listeners.append(played)
        await speaker.start()
        try:
            await _found(speaker)
            offered = voice_choices(speaker.voices, "ja", espeak=speaker.espeak)  # each companion's list
            assert (f"voicevox:22@127.0.0.1:{engine.port}", "VOICEVOX-compatible ずんだもん (ささやき)") in [
                (c.id, c.name) for c in offered]
            voice = Voice(ja="voicevox:3", engine="voicevox", rate=340).for_language("ja")  # speedScale 2.0
            asked = time.monotonic()
            result = await speaker.speak(Utterance(LINE, voice=voice, speaker_id="akari"))
        finally:
            await speaker.stop()
    assert result.success, result.reason
    assert result.voice == f"voicevox:3@127.0.0.1:{engine.port}"
    synthesis = [r for r in engine.requests if r.path == "/synthesis"]
    assert [r.params["speaker"] for r in synthesis] == ["3", "3", "3"]  # one request per sentence
    assert all(b'"speedScale": 2.0' in r.body for r in synthesis)  # the card's rate, as the engine's speed
    starts, ends = played.starts, played.ends
    assert len(starts) == 3
    # The second and third sentences were synthesised while the one before them played: no wait between them.
    assert engine.synthesized[1][1] < ends[0]
    assert engine.synthesized[2][1] < ends[1]
    assert all(starts[i + 1] - ends[i] < 0.25 for i in range(2))
    # The first audio waited for the first sentence only, not the whole line.
    assert starts[0] - asked < engine.synthesized[2][1] - asked
    # The highlight comes on with the voice, not while the engine synthesises the first sentence.
    on = [at for at, item in seen if isinstance(item, SpeakingChanged) and item.speaking]
    assert len(on) == 1
    assert on[0] >= engine.synthesized[0][1]
    # Each sentence's moras, timed by the engine, as its audio starts.
    spoken = [item for _, item in seen if isinstance(item, MorasSpoken)]
    assert [m.text for m in spoken] == ["はい、わかりました。", "そうですね。", "いきましょう。"]
    assert "".join(m.text for m in spoken[2].moras) == "いきましょう"
    assert spoken[2].moras[0].start_s == pytest.approx(0.05, abs=0.011)  # prePhonemeLength 0.1 at speed 2
    assert all(abs(m.started - s) < 0.1 for m, s in zip(spoken, starts, strict=True))


async def test_an_engine_that_is_gone_leaves_the_line_to_the_default_voice(
        bus: InProcessBus, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seen = _events(bus)
    engine = VoicevoxTestEngine()
    await engine.start()
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path / "speech", engine_urls=[engine.base_url])
    await speaker.start()
    try:
        await _found(speaker)
        await engine.stop()  # the user closed VOICEVOX
        with caplog.at_level(logging.WARNING):
            result = await speaker.speak(Utterance("こんにちは。また明日ね。", voice="voicevox:3;rate=185",
                                                   speaker_id="hina"))
            again = await speaker.speak(Utterance("まだ話せるよ。", voice="voicevox:3", speaker_id="hina"))
    finally:
        await speaker.stop()
    assert result.success, result.reason
    assert again.success
    assert not result.voice.startswith("voicevox")  # Mei (or the system's voice), heard all the same
    assert result.duration_s > 0.5
    notices = [item.reason for _, item in seen if isinstance(item, DeviceStatus) and "VOICEVOX" in item.reason]
    assert notices, "the status says why the engine's voice is not heard"
    assert "does not answer" in notices[-1]
    assert "said by the default voice" in notices[-1]
    assert all(record.exc_info is None for record in caplog.records)  # a notice, never a traceback


async def test_no_engine_at_all_is_said_once_and_the_line_still_heard(bus: InProcessBus, tmp_path: Path) -> None:
    seen = _events(bus)

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # accepts, never answers: a host that hangs

    hanging = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = hanging.sockets[0].getsockname()[1]
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path / "speech",
                             engine_urls=["http://127.0.0.1:9", f"http://127.0.0.1:{port}"])
    speaker.openjtalk_enabled = False
    began = time.monotonic()
    await speaker.start()
    assert time.monotonic() - began < 1.0  # the engines are looked for after the start, never within it
    try:
        result = await speaker.speak(Utterance("こんにちは。", voice="voicevox:3@192.168.1.20:50021",
                                               speaker_id="souta"))
        english = await speaker.speak(Utterance("See you.", voice="voicevox:3", speaker_id="souta"))
    finally:
        await speaker.stop()
        hanging.close()
    assert result.success, result.reason
    assert not result.skipped
    assert not result.voice.startswith("voicevox")
    assert result.duration_s > 0.3  # heard in the system's voice
    assert english.success  # an English line goes to the system's voice: VOICEVOX would read it as katakana
    reasons = [item.reason for _, item in seen if isinstance(item, DeviceStatus)]
    assert any("no voice engine at 192.168.1.20:50021 was found on this machine or given in the settings" in r
               for r in reasons)  # an engine elsewhere is never used without the user's say


async def test_voicevox_started_after_madoi_is_found_and_heard(bus: InProcessBus, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(speaker_module, "ENGINES_SEARCH_S", 0.2)  # 30 s in the app
    engine = VoicevoxTestEngine()
    await engine.start()
    await engine.stop()  # its address known, nothing there yet: the user has not started VOICEVOX
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path / "speech", engine_urls=[engine.base_url])
    speaker.openjtalk_enabled = False
    await speaker.start()
    try:
        before = await speaker.speak(Utterance("こんにちは。", voice="voicevox:3", speaker_id="akari"))
        await engine.start()  # the user starts VOICEVOX
        for _ in range(100):  # found at the next search (every 0.2 s here)
            if speaker.engines:
                break
            await asyncio.sleep(0.05)
        after = await speaker.speak(Utterance("こんにちは。", voice="voicevox:3", speaker_id="akari"))
    finally:
        await speaker.stop()
        await engine.stop()
    assert before.success
    assert not before.voice.startswith("voicevox")
    assert after.voice == f"voicevox:3@127.0.0.1:{engine.port}"
    assert any(v.id == after.voice for v in speaker.voices)  # and its voices are offered to the companions


@pytest.mark.timing
async def test_an_interruption_stops_a_line_the_engine_is_still_synthesising(bus: InProcessBus,
                                                                             tmp_path: Path) -> None:
    async with VoicevoxTestEngine(synthesis_rtf=3.0) as engine:  # a slow engine: ~3 s for this sentence
        speaker = Pyttsx3Speaker(bus, output_dir=tmp_path / "speech", engine_urls=[engine.base_url])
        speaker.openjtalk_enabled = False
        await speaker.start()
        try:
            await _found(speaker)
            line = asyncio.create_task(speaker.speak(Utterance("こんにちは。", voice="voicevox:3")))
            await asyncio.sleep(0.3)
            asked = time.monotonic()
            speaker.interrupt()  # Esc, or the user's message
            cut = await line
            stopped = time.monotonic() - asked
            engine.synthesis_rtf = 0.0
            began = time.monotonic()
            following = await speaker.speak(Utterance("はい。", voice="voicevox:3"))
            took = time.monotonic() - began
        finally:
            await speaker.stop()
    assert cut.interrupted
    assert stopped < 0.2
    assert following.success
    assert following.voice.startswith("voicevox")
    assert took < 1.0  # not behind the ~2.5 s the abandoned request still had to go
