"""The speaker with its real engines (Open JTalk's Mei for Japanese, pyttsx3 + espeak-ng for the rest) writing WAV
files (there is no sound card here): what a listener notices of the companions' voices."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from app.devices.japanese_reading import contains_kanji
from app.devices.speaker import Pyttsx3Speaker
from app.devices.voices import speech_problem, voice_choices
from app.devices.wiring import build_devices
from app.settings.model import Settings, VoiceSettings
from companions.cards.card import CompanionCard, Voice, load_cards, sample_cards_dir
from companions.devices.ports import DeviceStatus, Utterance
from companions.wire.bus import InProcessBus
from tests.app.devices.voice_measures import median_pitch, read_wav, seconds

LINE = "それなら、図書館で古い地図を調べてみましょう。"
ENGLISH = "Let me look that up in the library, it will only take a minute."


def sample_cards() -> dict[str, CompanionCard]:
    loaded = load_cards([sample_cards_dir()])
    assert loaded.problems == []
    return loaded.by_id()


def newest_wav(folder: Path) -> Path:
    return max(folder.glob("*.wav"))  # numbered in order


async def say(speaker: Pyttsx3Speaker, text: str, voice: str | None, who: str = "someone") -> Path:
    result = await speaker.speak(Utterance(text, voice=voice, speaker_id=who))
    assert result.success, result.reason
    assert not result.skipped, result.reason
    assert result.wav_path is not None
    return Path(result.wav_path)


async def test_a_japanese_line_is_said_by_open_jtalk_not_espeak(speaker: Pyttsx3Speaker) -> None:
    assert speaker.status.available, speaker.status
    result = await speaker.speak(Utterance(LINE, voice="ja", speaker_id="hina"))
    assert speaker.openjtalk_available  # loaded just after the start (the first line waits for it)
    assert speaker.status.reason == "", speaker.status
    assert result.success, result.reason
    assert result.voice == "openjtalk/mei"
    assert result.spoken_text == LINE  # read from the dictionary as written: no kana conversion first
    samples, rate = read_wav(result.wav_path or "")
    assert rate == 48000  # Mei's; espeak-ng writes 22050 Hz
    assert 2.0 < len(samples) / rate < 6.0
    espeak = await speaker.speak(Utterance(LINE, voice="jpx/ja", speaker_id="hina"))  # a system voice, chosen
    assert espeak.voice == "jpx/ja"
    assert read_wav(espeak.wav_path or "")[1] == 22050


async def test_the_three_companions_sound_different(speaker: Pyttsx3Speaker) -> None:
    """The sample cards' voices, as their ``speak`` queries carry them: the same line differs in pace and pitch."""
    cards = sample_cards()
    wavs = {who: await say(speaker, LINE, cards[who].voice.for_language("ja"), who)
            for who in ("akari", "hina", "souta")}
    length = {who: seconds(path) for who, path in wavs.items()}
    pitch = {who: median_pitch(path) for who, path in wavs.items()}
    # Akari (rate 185) is quick, Souta (160) slow: at least 10 % apart.
    assert length["akari"] < length["hina"] < length["souta"]
    assert length["souta"] > 1.1 * length["akari"]
    # Akari +2.5 semitones, Hina -1.5, Souta -7: each at least two semitones (x1.12) from the next.
    assert pitch["akari"] > 1.12 * pitch["hina"] > 1.12 * 1.12 * pitch["souta"]


async def test_a_card_s_rate_changes_how_long_a_line_takes_in_both_engines(speaker: Pyttsx3Speaker) -> None:
    slow = seconds(await say(speaker, LINE, "ja;rate=120"))
    quick = seconds(await say(speaker, LINE, "ja;rate=240"))
    assert quick < 0.7 * slow
    slow = seconds(await say(speaker, ENGLISH, "en-us;rate=120"))
    quick = seconds(await say(speaker, ENGLISH, "en-us;rate=240"))
    assert quick < 0.7 * slow
    # The settings' rate scales a card's: everyone speaks quicker when the user asks for it.
    at_card = seconds(await say(speaker, LINE, "ja;rate=185"))
    speaker.rate = 255
    assert seconds(await say(speaker, LINE, "ja;rate=185")) < 0.8 * at_card


async def test_an_english_line_still_goes_through_pyttsx3(speaker: Pyttsx3Speaker) -> None:
    card_voice = sample_cards()["souta"].voice.for_language("en")  # en-gb, with Souta's tuning
    result = await speaker.speak(Utterance(ENGLISH, voice=card_voice, speaker_id="souta"))
    assert result.success, result.reason
    assert result.voice.split("/")[-1].startswith("en"), result.voice  # espeak-ng's British English voice (gmw/en)
    samples, rate = read_wav(result.wav_path or "")
    assert rate == 22050
    assert 2.0 < len(samples) / rate < 8.0
    # Even when the companion's Japanese voice is Open JTalk by name: the line's language decides.
    by_name = await speaker.speak(Utterance("Good evening, everyone.", voice="openjtalk", speaker_id="akari"))
    assert by_name.voice.split("/")[-1].startswith("en"), by_name.voice


async def test_kanji_are_read_by_the_system_voice_too(speaker: Pyttsx3Speaker) -> None:
    """A companion given the system engine: the Open JTalk dictionary reads the kanji into kana for espeak-ng, so
    it never says "Chinese letter" (six times here, about 5 s)."""
    kanji = await speaker.speak(Utterance("今日は東京へ行きます。", voice="ja;engine=system", speaker_id="souta"))
    kana = await speaker.speak(Utterance("きょうはとうきょうへいきます。", voice="ja;engine=system"))
    assert kanji.voice.endswith("ja")
    assert not contains_kanji(kanji.spoken_text)
    assert kanji.spoken_text == "キョーワトーキョーエイキマス。"
    assert kanji.duration_s == pytest.approx(kana.duration_s, rel=0.25)


async def test_mei_is_offered_among_the_japanese_voices(speaker: Pyttsx3Speaker) -> None:
    ja = voice_choices(speaker.voices, "ja", espeak=speaker.espeak)
    assert ja[0].id == "openjtalk"
    assert not any(choice.id.startswith("openjtalk+") for choice in ja)  # espeak's variants are espeak's
    assert "openjtalk" not in {choice.id for choice in voice_choices(speaker.voices, "en", espeak=speaker.espeak)}


async def test_speech_never_blocks_the_event_loop(speaker: Pyttsx3Speaker) -> None:
    long_line = "".join(["夜空の星を眺めていると、時間を忘れてしまいますね。"] * 6)
    gaps: list[float] = []
    done = False

    async def tick() -> None:
        last = time.monotonic()
        while not done:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    result = await speaker.speak(Utterance(long_line, voice="ja", speaker_id="akari"))
    done = True
    await ticker
    assert result.success
    assert result.duration_s > 10
    assert max(gaps) < 0.15, max(gaps)  # 13 ms here; one 80-character chunk held on the loop would be ~0.3 s


async def test_no_system_engine_leaves_japanese_spoken_and_says_why(tmp_path: Path, bus: InProcessBus) -> None:
    statuses: list[DeviceStatus] = []
    bus.subscribe("events", lambda e: statuses.append(e) if isinstance(e, DeviceStatus) else None)
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path, driver_name="no_such_driver")
    await speaker.start()
    try:
        assert speaker.status.available
        assert speaker.status.reason.startswith("no speech engine"), speaker.status.reason
        assert "only Japanese lines" in speaker.status.reason
        japanese = await speaker.speak(Utterance(LINE, voice="ja"))
        assert japanese.success
        assert japanese.voice == "openjtalk/mei"
        english = await speaker.speak(Utterance(ENGLISH, voice="en-us"))
        assert english.success
        assert english.skipped
        assert speech_problem(english.reason).kind == "no_engine", english.reason
        await bus.drain()
        assert statuses
        assert statuses[-1] == speaker.status
    finally:
        await speaker.stop()


async def test_no_open_jtalk_leaves_japanese_to_the_system_voice(
        tmp_path: Path, bus: InProcessBus, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyopenjtalk", None)  # as if pyopenjtalk-plus were not installed
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path)
    await speaker.start()
    try:
        result = await speaker.speak(Utterance("今日は東京へ行きます。", voice="ja"))
        assert speaker.status.available
        assert speaker.status.reason.startswith("Open JTalk is not available"), speaker.status.reason
        assert not speaker.openjtalk_available
        assert result.success
        assert not result.skipped
        assert result.voice.endswith("ja")  # espeak-ng's Japanese voice
        # Open JTalk's dictionary is the only one that reads kanji: without pyopenjtalk-plus the line is said as written
        assert result.spoken_text == "今日は東京へ行きます。"
    finally:
        await speaker.stop()


async def test_no_engine_at_all_is_a_status_not_a_crash(
        tmp_path: Path, bus: InProcessBus, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyopenjtalk", None)
    speaker = Pyttsx3Speaker(bus, output_dir=tmp_path, driver_name="no_such_driver")
    await speaker.start()
    try:
        assert not speaker.status.available
        assert speech_problem(speaker.status.reason).kind == "no_engine"
        assert "Open JTalk is not available" in speaker.status.reason
        result = await speaker.speak(Utterance(LINE, voice="ja"))
        assert result.success
        assert result.skipped
    finally:
        await speaker.stop()


def test_old_cards_keep_their_voices_and_new_ones_are_checked() -> None:
    assert Voice.model_validate({"ja": "ja", "en": "en-us+f3"}).for_language("en") == "en-us+f3"  # nothing tuned
    assert Voice.model_validate({}).for_language("ja") is None
    tuned = Voice.model_validate({"rate": 150, "half_tone": -3, "all_pass": 0.6, "engine": "system"})
    assert tuned.for_language("ja") == "ja;engine=system;rate=150;half_tone=-3;all_pass=0.6"
    for wrong in ({"half_tone": 40}, {"all_pass": 1.5}, {"engine": "coeiroink"}):
        with pytest.raises(ValueError, match="validation error"):
            Voice.model_validate(wrong)


async def test_a_long_line_starts_playing_before_it_is_all_rendered(bus: InProcessBus) -> None:
    """Open JTalk renders a chunk whole before it plays: a line of ten sentences is played chunk by chunk (``true``
    stands in for the audio player: there is no sound card here), the first well before the last is rendered."""
    speaker = Pyttsx3Speaker(bus, player=["true"])
    started: list[float] = []
    speaker.playback_listeners.append(lambda path: started.append(time.monotonic()) if path else None)
    await speaker.start()
    try:
        await speaker.speak(Utterance("あ", voice="ja"))  # Open JTalk loads after the start: not timed here
        started.clear()
        begin = time.monotonic()
        result = await speaker.speak(Utterance("".join(["夜空の星を眺めていると、時間を忘れてしまいますね。"] * 10),
                                               voice="ja", speaker_id="akari"))
        end = time.monotonic()
    finally:
        await speaker.stop()
    assert result.success, result.reason
    assert result.voice == "openjtalk/mei"
    assert len(started) >= 3
    assert started[0] - begin < 0.5 * (end - begin)


async def test_emotion_is_heard_in_mei_s_voice(speaker: Pyttsx3Speaker) -> None:
    said = {}
    for emotion in ("happy", "neutral", "sad"):
        result = await speaker.speak(Utterance(LINE, emotion=emotion, voice="ja", speaker_id="hina"))
        assert result.voice == "openjtalk/mei"
        said[emotion] = Path(result.wav_path or "")
    # Happy is quicker and a little higher, sad slower and lower (1.5 semitones each way: x1.09).
    assert seconds(said["sad"]) > 1.2 * seconds(said["happy"])
    assert median_pitch(said["happy"]) > 1.05 * median_pitch(said["neutral"]) > 1.05 * 1.05 * median_pitch(said["sad"])


async def test_the_settings_voice_test_is_heard_at_the_companion_s_rate(tmp_path: Path, bus: InProcessBus) -> None:
    """The Companions tab tests a companion's voice with its card's tuning, at the dialog's rate."""
    devices = build_devices(Settings.model_validate({"camera": {"source": "none"}}), bus, speech_dir=tmp_path)
    await devices.speaker.start()
    try:
        said = []
        for voice in ("ja;rate=120", "ja;rate=240"):
            await devices.test_voice(VoiceSettings(rate=170), LINE, voice)
            said.append(seconds(newest_wav(tmp_path)))
    finally:
        await devices.speaker.stop()
    assert said[1] < 0.7 * said[0]


async def test_a_line_is_heard_after_its_first_clause_and_each_next_chunk_is_rendered_while_one_plays(
        bus: InProcessBus) -> None:
    """The first audio waits for the first clause, not the line (measured: 82-105 ms against 587-669 ms when the
    line rendered in 80-letter chunks); no silence between the chunks after it: the next is ready when one has
    played. The player here takes 1 s per chunk whatever it holds (``sh -c 'sleep 1'``: there is no sound card)."""
    speaker = Pyttsx3Speaker(bus, player=["sh", "-c", "sleep 1", "player"])
    heard: list[tuple[float, float | None]] = []  # when a chunk began (its seconds of speech) or ended (None)
    speaker.playback_listeners.append(lambda path: heard.append((time.monotonic(), path and seconds(path))))
    await speaker.start()
    try:
        result = await speaker.speak(Utterance("夜空の星を眺めていると、時間を忘れてしまいますね。流れ星が見えたら、"
                                               "何をお願いしますか？", voice="ja", speaker_id="akari"))
    finally:
        await speaker.stop()
    assert result.success, result.reason
    # 夜空の…ると、/ 時間を…ね。/ 流れ星が見えたら、何をお願いしますか？ (after the first, whole sentences)
    assert [spoken is not None for _, spoken in heard] == [True, False] * 3
    first = heard[0][1]
    assert first is not None
    assert first < 3.0  # a clause (2.4 s): the line whole says 8.2 s
    assert heard[2][0] - heard[1][0] < 0.2  # the second starts as the first ends
    assert heard[4][0] - heard[3][0] < 0.2


async def test_an_interrupted_japanese_line_stops_at_once(bus: InProcessBus) -> None:
    speaker = Pyttsx3Speaker(bus, player=["sh", "-c", "sleep 2", "player"])  # a chunk "plays" 2 s
    playing = asyncio.Event()
    loop = asyncio.get_running_loop()
    speaker.playback_listeners.append(lambda path: loop.call_soon_threadsafe(playing.set) if path else None)
    await speaker.start()
    try:
        line = asyncio.create_task(speaker.speak(Utterance(
            "".join(["夜空の星を眺めていると、時間を忘れてしまいますね。"] * 10), voice="ja", speaker_id="akari")))
        await asyncio.wait_for(playing.wait(), 10)
        cut = time.monotonic()
        speaker.interrupt()  # while the next chunk renders and this one plays
        result = await asyncio.wait_for(line, 5)
        stopped = time.monotonic() - cut
        after = await speaker.speak(Utterance("はい。", voice="ja", speaker_id="hina"))  # the next line is said
    finally:
        await speaker.stop()
    assert result.interrupted
    assert stopped < 0.5, stopped
    assert after.success, after.reason
    assert after.voice == "openjtalk/mei"


PARTS = ("夜空の星を眺めていると、時間を忘れてしまいますね。", "流れ星が見えたら、何をお願いしますか？",
         "私は宇宙飛行士になりたいです！")


async def test_a_line_said_sentence_by_sentence_has_no_silence_between_them(bus: InProcessBus) -> None:
    """Early speech sends each sentence as it is written: the next one's audio is rendered while one plays."""
    speaker = Pyttsx3Speaker(bus, player=["sh", "-c", "sleep 1", "player"])  # a sentence "plays" 1 s
    heard: list[tuple[float, bool]] = []
    speaker.playback_listeners.append(lambda path: heard.append((time.monotonic(), path is not None)))
    await speaker.start()
    try:
        await speaker.speak(Utterance("あ", voice="ja"))  # Open JTalk loads after the start: not timed here
        heard.clear()
        results = await asyncio.gather(*(speaker.speak(Utterance(part, voice="ja", speaker_id="akari"))
                                         for part in PARTS))
    finally:
        await speaker.stop()
    assert all(result.success for result in results)
    assert [playing for _, playing in heard] == [True, False] * 5  # the first two are heard after their first clause
    assert all(heard[i + 1][0] - heard[i][0] < 0.15 for i in (1, 3, 5, 7))  # 0.2-0.3 s each before, rendering then


async def test_sentences_queued_behind_an_interrupted_one_are_not_said(bus: InProcessBus) -> None:
    speaker = Pyttsx3Speaker(bus, player=["sh", "-c", "sleep 2", "player"])
    playing = asyncio.Event()
    played: list[Path] = []
    loop = asyncio.get_running_loop()

    def heard(path: Path | None) -> None:
        if path is not None:
            played.append(path)
            loop.call_soon_threadsafe(playing.set)

    speaker.playback_listeners.append(heard)
    await speaker.start()
    try:
        parts = [asyncio.create_task(speaker.speak(Utterance(part, voice="ja", speaker_id="akari")))
                 for part in PARTS]
        await asyncio.wait_for(playing.wait(), 10)
        await asyncio.sleep(0.5)  # the second sentence is rendered ahead meanwhile
        speaker.interrupt()
        results = await asyncio.wait_for(asyncio.gather(*parts), 5)
    finally:
        await speaker.stop()
    assert [result.interrupted for result in results] == [True, True, True]
    assert len(played) == 1  # only the first one was heard, cut short
