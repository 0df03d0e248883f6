"""The pyttsx3 speaker with the real espeak-ng engine, rendering WAV files (there is no sound card here)."""

from __future__ import annotations

import asyncio
import time
import wave
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.devices.japanese_reading import contains_kanji, to_kana
from app.devices.speaker import Pyttsx3Speaker
from app.devices.tts_engine import split_for_speech
from companions.bus import InProcessBus
from companions.devices import DeviceStatus, SpeakingChanged, Utterance
from companions.protocol import Query
from companions.responders import SpeakResponder

LONG_TEXT = " ".join(f"This is sentence number {i} of a very long utterance that nobody wants to hear."
                     for i in range(150))


def wav_seconds(path: str | Path) -> float:
    with wave.open(str(path), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


@pytest.fixture
async def bus() -> AsyncIterator[InProcessBus]:
    bus = InProcessBus()
    yield bus
    await bus.aclose()


@pytest.fixture
async def speaker(tmp_path: Path, bus: InProcessBus) -> AsyncIterator[Pyttsx3Speaker]:
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path / "speech")
    await speaker.start()
    yield speaker
    await speaker.stop()


def test_split_for_speech_keeps_every_word_in_short_chunks() -> None:
    text = "Hello there. How are you? " + "word " * 100 + "。今日は晴れ。"
    chunks = split_for_speech(text, max_chars=60)
    assert all(len(c) <= 60 for c in chunks)
    assert " ".join(chunks).split() == text.replace("。", "。 ").split()


def test_japanese_is_read_in_kana() -> None:
    kana = to_kana("今日は東京へ行きます。")
    assert not contains_kanji(kana)
    assert kana == "キョーワトーキョーエイキマス。"  # particles read as spoken (ワ, エ), long vowels marked
    assert to_kana("AIと話す") .startswith("AI")  # words without a reading stay as written


async def test_english_utterance_renders_a_wav_file(speaker: Pyttsx3Speaker, bus: InProcessBus) -> None:
    assert speaker.status.available
    events: list[SpeakingChanged] = []
    bus.subscribe("events", lambda e: events.append(e) if isinstance(e, SpeakingChanged) else None)
    result = await speaker.speak(Utterance("Hello, I am Alice. Nice to meet you.", speaker_id="alice"))
    assert result.success, result.reason
    assert result.wav_path is not None
    assert result.wav_path.endswith("-alice.wav")
    assert wav_seconds(result.wav_path) == pytest.approx(result.duration_s)
    assert 1.0 < result.duration_s < 6.0
    assert "en" in result.voice
    await bus.drain()
    assert [(e.speaker_id, e.speaking) for e in events] == [("alice", True), ("alice", False)]


async def test_japanese_text_is_converted_to_kana_and_spoken_by_the_japanese_voice(
        speaker: Pyttsx3Speaker) -> None:
    result = await speaker.speak(Utterance("今日は良い天気ですね。", voice="en"))
    assert result.success, result.reason
    assert result.voice.endswith("ja")  # an English voice cannot read Japanese: the Japanese one does
    assert not contains_kanji(result.spoken_text)
    # Read as words, not as "Chinese letter" six times over.
    assert 0.5 < result.duration_s < 3.5


async def test_card_voices_with_espeak_variants(speaker: Pyttsx3Speaker) -> None:
    plain = await speaker.speak(Utterance("Good morning, everyone.", voice="en-us"))
    variant = await speaker.speak(Utterance("Good morning, everyone.", voice="en-us+f3"))
    assert plain.voice.endswith("en-us")
    assert variant.voice.endswith("en-us+f3")
    assert variant.success
    assert variant.duration_s > 0.5
    with wave.open(plain.wav_path or "", "rb") as a, wave.open(variant.wav_path or "", "rb") as b:
        assert a.readframes(a.getnframes()) != b.readframes(b.getnframes())  # a different voice was heard


async def test_emotion_changes_the_delivery(speaker: Pyttsx3Speaker) -> None:
    text = "I found the answer in the notes you shared yesterday."
    sad = await speaker.speak(Utterance(text, emotion="sad"))
    happy = await speaker.speak(Utterance(text, emotion="happy"))
    assert sad.duration_s > happy.duration_s * 1.2  # sad is slower
    fast = await speaker.speak(Utterance(text, emotion="sad", rate=300))  # a card's own speaking rate
    assert fast.duration_s < sad.duration_s * 0.7


async def test_utterances_are_spoken_in_order(speaker: Pyttsx3Speaker) -> None:
    results = await asyncio.gather(*(speaker.speak(Utterance(f"Number {n}.", speaker_id=f"c{n}")) for n in range(4)))
    assert all(r.success for r in results)
    names = [Path(r.wav_path or "").name for r in results]
    assert names == sorted(names)
    assert [n.split("-")[1] for n in names] == ["c0.wav", "c1.wav", "c2.wav", "c3.wav"]


async def test_interrupt_stops_a_long_utterance_within_200_ms(speaker: Pyttsx3Speaker, bus: InProcessBus) -> None:
    started = asyncio.Event()
    bus.subscribe("events", lambda e: started.set() if isinstance(e, SpeakingChanged) and e.speaking else None)
    long = asyncio.ensure_future(speaker.speak(Utterance(LONG_TEXT, speaker_id="bob")))
    queued = asyncio.ensure_future(speaker.speak(Utterance("I was queued behind it.")))
    async with asyncio.timeout(10):
        await started.wait()
    begun = time.perf_counter()
    speaker.interrupt()
    async with asyncio.timeout(0.2):
        result, dropped = await asyncio.gather(long, queued)
    assert time.perf_counter() - begun < 0.2
    assert result.interrupted
    assert not result.success
    assert dropped.interrupted
    assert result.duration_s < 60  # only part of the ~70 s text was rendered
    # The engine is usable again right after.
    after = await speaker.speak(Utterance("Still here."))
    assert after.success
    assert after.duration_s > 0.3


async def test_a_cancelled_speak_stops_its_utterance(speaker: Pyttsx3Speaker, bus: InProcessBus) -> None:
    started = asyncio.Event()
    bus.subscribe("events", lambda e: started.set() if isinstance(e, SpeakingChanged) and e.speaking else None)
    long = asyncio.ensure_future(speaker.speak(Utterance(LONG_TEXT)))
    async with asyncio.timeout(10):
        await started.wait()
    long.cancel()  # e.g. the companion's turn was cancelled by the user
    # The next utterance does not wait for the remaining ~70 s of text to be rendered.
    after = await asyncio.wait_for(speaker.speak(Utterance("Next.")), 1.0)
    assert after.success


async def test_speak_query_answers_when_the_utterance_has_finished(speaker: Pyttsx3Speaker) -> None:
    responder = SpeakResponder(speaker)
    query = Query.create(from_="alice", type="speak", body={"message": "こんにちは、円居です。", "emotion": "happy"})
    result = await responder.respond(query)
    assert result.succeeded
    assert result.result is not None
    assert result.result.body["duration"] > 0.3
    assert wav_seconds(result.result.body["wav"]) == pytest.approx(result.result.body["duration"], abs=0.01)


async def test_no_audio_device_is_reported_once_and_speech_is_skipped(bus: InProcessBus) -> None:
    statuses: list[DeviceStatus] = []
    bus.subscribe("events", lambda e: statuses.append(e) if isinstance(e, DeviceStatus) else None)
    speaker = Pyttsx3Speaker(bus, player=["false"])  # a player that fails like aplay without a sound card
    await speaker.start()
    try:
        first = await speaker.speak(Utterance("Can anyone hear me?"))
        second = await speaker.speak(Utterance("Hello?"))
    finally:
        await speaker.stop()
    for result in (first, second):
        assert result.success
        assert result.skipped
        assert result.reason.startswith("no audio device")
    await bus.drain()
    down = [s for s in statuses if not s.available]
    assert len(down) == 1
    assert down[0].reason.startswith("no audio device: false exited with 1")
    assert not speaker.status.available


async def test_missing_player_is_no_audio_device(bus: InProcessBus) -> None:
    speaker = Pyttsx3Speaker(bus, player=["/nonexistent/player"])
    await speaker.start()
    try:
        result = await speaker.speak(Utterance("Hello?"))
    finally:
        await speaker.stop()
    assert result.skipped
    assert "cannot run the audio player" in result.reason


async def test_interrupt_stops_playback_within_200_ms(tmp_path: Path, bus: InProcessBus) -> None:
    # A stand-in for a sound device: a real process that "plays" for 5 s unless it is terminated.
    speaker = Pyttsx3Speaker(bus, player=["sh", "-c", "sleep 5", "player"])
    started = asyncio.Event()
    bus.subscribe("events", lambda e: started.set() if isinstance(e, SpeakingChanged) and e.speaking else None)
    await speaker.start()
    try:
        playing = asyncio.ensure_future(speaker.speak(Utterance("A sentence that takes a while to play.")))
        async with asyncio.timeout(5):
            await started.wait()
        await asyncio.sleep(0.1)  # let synthesis finish and the player start (the case being tested)
        begun = time.perf_counter()
        speaker.interrupt()
        async with asyncio.timeout(0.2):
            result = await playing
        assert time.perf_counter() - begun < 0.2
        assert result.interrupted
    finally:
        await speaker.stop()


async def test_speech_turned_off_in_the_settings_is_skipped_without_an_engine(bus: InProcessBus) -> None:
    from app.devices.speaker import build_speaker

    speaker = build_speaker(bus, enabled=False)
    await speaker.start()
    try:
        result = await speaker.speak(Utterance("Hello?"))
    finally:
        await speaker.stop()
    assert result.skipped
    assert result.reason == "speech is turned off in the settings"
    assert not speaker.status.available
