"""The pyttsx3 speaker with the real espeak-ng engine, rendering WAV files (there is no sound card here)."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
import wave
from pathlib import Path

import pytest

from app.devices.japanese_reading import contains_kanji, to_kana
from app.devices.speaker import Pyttsx3Speaker
from app.devices.tts_engine import split_for_speech
from companions.cards.card import load_cards, sample_cards_dir
from companions.companion.companion import Companion
from companions.devices.ports import DeviceStatus, SpeakingChanged, Utterance
from companions.devices.responders import SpeakResponder
from companions.llm.scripted import ScriptedModel
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Query
from companions.wire.query_broker import QueryBroker

LONG_TEXT = " ".join(f"This is sentence number {i} of a very long utterance that nobody wants to hear."
                     for i in range(150))


def wav_seconds(path: str | Path) -> float:
    with wave.open(str(path), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


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
    # The system engine asked for (Open JTalk says Japanese lines otherwise: tests/app/devices/test_openjtalk_*.py).
    result = await speaker.speak(Utterance("今日は良い天気ですね。", voice="en;engine=system"))
    assert result.success, result.reason
    assert result.voice.endswith("ja")  # an English voice cannot read Japanese: the Japanese one does
    assert not contains_kanji(result.spoken_text)
    # Read as words, not as "Chinese letter" six times over.
    assert 0.5 < result.duration_s < 3.5


async def test_an_english_line_given_the_japanese_voice_is_said_by_an_english_one(speaker: Pyttsx3Speaker) -> None:
    result = await speaker.speak(Utterance("Good evening, everyone.", voice="ja+f3"))  # e.g. a client's query
    assert result.success, result.reason
    assert not result.voice.split("/")[-1].startswith("ja"), result.voice  # the Japanese one spelled it out, 5 s
    assert result.voice.endswith("+f3")  # the variant stays
    assert result.duration_s < 3


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


# A stand-in for a sound device: a real process that "plays" a WAV file for its duration (or until terminated),
# and writes when it started and ended, so that the tests can see the order, the gaps and any overlap.
# It also tells the test on a socket that it started (tests wait on events, never on sleeps).
STAND_IN_PLAYER = """
import socket, sys, time, wave
log_path, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with wave.open(path, "rb") as w:
    seconds = w.getnframes() / w.getframerate()
with open(log_path, "a") as log:
    log.write(f"start {time.time()!r} {seconds!r}\\n")
    log.flush()
    socket.create_connection(("127.0.0.1", port)).close()
    time.sleep(seconds)
    log.write(f"end {time.time()!r}\\n")
"""


class StandInPlayer:
    """The player command, its log, and the number of playbacks started so far (an event per start)."""

    def __init__(self, tmp_path: Path) -> None:
        self.script = tmp_path / "player.py"
        self.script.write_text(STAND_IN_PLAYER)
        self.log = tmp_path / "played.log"
        self.started = 0
        self._changed = asyncio.Event()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> StandInPlayer:
        self._server = await asyncio.start_server(self._on_start, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def command(self) -> list[str]:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return [sys.executable, "-S", str(self.script), str(self.log), str(port)]

    async def _on_start(self, _reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.started += 1
        self._changed.set()
        writer.close()

    async def wait_started(self, count: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while self.started < count:
                self._changed.clear()
                await self._changed.wait()


def played(log: Path) -> list[tuple[float, float | None]]:
    """(start, end) of each playback, in order (end None when it was cut off)."""
    spans: list[tuple[float, float | None]] = []
    for line in log.read_text().splitlines() if log.exists() else []:
        kind, stamp, *_ = line.split()
        if kind == "start":
            spans.append((float(stamp), None))
        else:
            spans[-1] = (spans[-1][0], float(stamp))
    return spans


SENTENCES = ["Hello everyone, here is the first sentence.", "And this is the second one.",
             "A third sentence follows right away.", "That is all."]


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
async def test_the_sentences_of_a_line_are_voiced_in_order_back_to_back_as_one_speech(tmp_path: Path,
                                                                                        bus: InProcessBus) -> None:

    async with StandInPlayer(tmp_path) as player:
        await voice_a_line_in_parts(player, bus)


async def voice_a_line_in_parts(player: StandInPlayer, bus: InProcessBus) -> None:
    log = player.log
    speaker = Pyttsx3Speaker(bus, player=player.command)
    broker = QueryBroker(bus)
    broker.register(SpeakResponder(speaker))
    speaking: list[tuple[str, bool]] = []
    bus.subscribe("events", lambda e: speaking.append((e.speaker_id, e.speaking))
                  if isinstance(e, SpeakingChanged) else None)
    await speaker.start()
    await broker.start()
    try:
        queries = [Query.create(from_="akari", type="speak",
                                body={"message": text, "messageId": "line-1", "part": n,
                                      "final": n == len(SENTENCES) - 1})
                   for n, text in enumerate(SENTENCES)]
        # Sent at once, as conversation control sends each sentence as soon as the model has written it.
        results = await asyncio.gather(*(broker.send_query(q) for q in queries))
    finally:
        await broker.aclose()
        await speaker.stop()
    assert all(r.succeeded for r in results)
    spans = played(log)
    assert len(spans) == len(SENTENCES)  # one file each (short sentences: one chunk each)
    durations = [r.result.body["duration"] for r in results if r.result is not None]
    assert durations == sorted(durations, key=durations.index)  # (each answer is its own sentence)
    gaps = [later[0] - (earlier[1] or 0.0) for earlier, later in itertools.pairwise(spans)]
    assert all(gap >= 0 for gap in gaps), gaps  # never two at once
    assert max(gaps) < 0.3, gaps  # the next sentence is rendered and started right after
    print(f"gaps between sentences: {[round(g * 1000) for g in gaps]} ms")
    await bus.drain()
    assert speaking == [("akari", True), ("akari", False)]  # one speech, lit once


async def test_a_cancelled_speak_query_stops_the_sentence_being_played_within_200_ms(tmp_path: Path,
                                                                                     bus: InProcessBus) -> None:

    async with StandInPlayer(tmp_path) as player:
        await cut_a_line_off(player, bus)


async def cut_a_line_off(player: StandInPlayer, bus: InProcessBus) -> None:
    log = player.log
    speaker = Pyttsx3Speaker(bus, player=player.command)
    broker = QueryBroker(bus)
    broker.register(SpeakResponder(speaker))
    stopped = asyncio.Event()
    bus.subscribe("events", lambda e: stopped.set() if isinstance(e, SpeakingChanged) and not e.speaking else None)
    await speaker.start()
    await broker.start()
    try:
        first, second = (Query.create(from_="akari", type="speak", body={"message": LONG_TEXT[:190],
                                                                           "messageId": "line-2", "part": n})
                         for n in range(2))
        speaking = asyncio.ensure_future(broker.send_query(first))
        queued = asyncio.ensure_future(broker.send_query(second))
        await player.wait_started(1)
        begun = time.perf_counter()
        speaking.cancel()  # the user cut in: conversation control cancels the task awaiting the speech
        async with asyncio.timeout(0.2):
            await stopped.wait()
        latency = time.perf_counter() - begun
        result = await asyncio.wait_for(queued, 1.0)  # the rest of the line is not spoken
        assert result.result is not None
        assert result.result.body["interrupted"]
        assert played(log)[0][1] is None  # the player was terminated, not left to finish
        assert len(played(log)) == 1
        print(f"cancel -> SpeakingChanged(false): {latency * 1000:.0f} ms")
        after = await broker.send_query(Query.create(from_="akari", type="speak", body={"message": "Next."}))
        assert after.succeeded  # the speaker is usable at once
    finally:
        await broker.aclose()
        await speaker.stop()


async def test_a_speaker_stopped_while_it_speaks_releases_the_engine_for_the_next_one(
    tmp_path: Path, bus: InProcessBus,
) -> None:
    # The app stops a speaker while it talks (quitting, a settings change); the next speaker must get the engine.
    first = Pyttsx3Speaker(bus, output_dir=tmp_path / "first")
    await first.start()
    speaking = asyncio.Event()
    bus.subscribe("events", lambda e: speaking.set() if isinstance(e, SpeakingChanged) and e.speaking else None,
                  direct=True)
    talk = asyncio.ensure_future(first.speak(Utterance("This is a long line. " * 20, speaker_id="alice")))
    await asyncio.wait_for(speaking.wait(), 10)
    thread = first._thread
    assert thread is not None
    await first.stop()
    await asyncio.wait_for(talk, 5)
    assert not thread.is_alive(), "the stopped speaker's thread still holds the speech engine"
    second = Pyttsx3Speaker(bus, output_dir=tmp_path / "second")
    await second.start()
    try:
        assert second.status.available, second.status.reason
    finally:
        await second.stop()


@pytest.mark.parametrize(("interface", "line", "voices"), [
    ("en", "こんばんは！今日は流れ星が見えるかな。", ("ja", "openjtalk/mei")),
    ("ja", "Good evening! Shall we look for shooting stars?", ("en-us", "en-us")),
])
async def test_a_line_goes_to_the_voice_of_its_own_language_not_the_interface_s(
        speaker: Pyttsx3Speaker, bus: InProcessBus, interface: str, line: str, voices: tuple[str, str]) -> None:
    """Before: a Japanese line went out with ``"voice": "en-us"`` (the interface's language), so a bridge client
    said it in English; an English line in a Japanese window was read by the Japanese voice."""
    broker = QueryBroker(bus)
    broker.register(SpeakResponder(speaker))
    await broker.start()
    asked: list[Query] = []
    bus.subscribe("queries", lambda q: asked.append(q) if isinstance(q, Query) else None, name="test-queries")
    card = load_cards([sample_cards_dir()]).by_id()["akari"]  # voice: {ja: ja, en: en-us}
    akari = Companion(card, ScriptedModel("akari"), bus=bus, queries=broker, language=interface)
    try:
        result = await akari.builtins.say(line)
        await bus.drain()
    finally:
        await akari.aclose()
        await broker.aclose()
    [query] = [q for q in asked if q.params.type == "speak"]
    assert query.params.body is not None
    voice, spoken_by = voices
    # What a bridge client that speaks for the app is told: the voice, then the card's tuning (rate, half-tone ...).
    assert query.params.body["voice"].split(";")[0] == voice
    assert "rate=185" in query.params.body["voice"].split(";")
    assert result.success
    assert result.voice.endswith(spoken_by)  # what spoke it: Open JTalk's Mei, espeak-ng's English voice
    assert wav_seconds(result.wav_path or "") > 0.5
