"""The real-time factor of the Japanese voices, as the app voices a line: Open JTalk's Mei and Kokoro-82M against
espeak-ng; and Kokoro's first audio with sentence pipelining against the whole line rendered first.

The app's speaker (app/devices/speaker.py, audio to WAV files: no playback) says the same 12 Japanese sentences with
each engine: Open JTalk (the default for Japanese, with Hina's card voice), Kokoro (the downloaded neural voice,
``kokoro:jf_alpha`` at Hina's rate: the int8 model and voices prepared by scripts/kokoro_model.py, on the app's
onnxruntime with :data:`app.devices.kokoro_voice.THREADS` threads) and espeak-ng (``engine=system``: the kanji read
into kana first, as before Open JTalk). Real-time factor = time to render a line / the line's audio
length (lower is quicker; 1.0 is as long as the speech). After one warm-up round, ``--rounds`` rounds; the figures
are the medians over every line said. Also the median time from a line's start to its whole audio written (no
playback), which is what a listener waits before the first word of a one-sentence line.

``--first-audio``: a three-sentence line said by Kokoro through a player that lasts as long as the WAV, ``--runs``
times each way, alternating: sentence by sentence (each rendered while the one before plays, the first sentence cut
after its first clause, as the speaker does) against the whole line rendered before anything plays; line start ->
first audio, -> end, and the silences between sentences.

Run: ``python bench/voice_rtf.py [--rounds 3] [--no-kokoro]``, ``python bench/voice_rtf.py --first-audio [--runs 2]``
(note ``uptime`` with every figure).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path

from _report import report
from _speech import LINE, PLAYER, LineTiming, medians, say_lines, timed_line, with_kokoro

import app.devices.speaker as speaker_module
from app.devices.speaker import Pyttsx3Speaker
from companions.devices.ports import Utterance

KOKORO = "Kokoro (jf_alpha)"

SENTENCES = (
    "おはようございます。今日はいい天気ですね。",
    "昨日の夜、流れ星を三つも見つけました。",
    "図書館で古い地図を調べてみましょう。",
    "駅前に新しい喫茶店ができたそうです。",
    "週末は家族と一緒に山へ行く予定です。",
    "この本は百年前に書かれたものです。",
    "明日の会議は午後二時から始まります。",
    "東京から大阪まで新幹線で二時間半かかります。",
    "風が強いので、窓を閉めておいてください。",
    "宇宙飛行士になるのが子供の頃からの夢でした。",
    "何か困ったことがあれば、いつでも声をかけてね。",
    "それなら、私も一緒に手伝いますよ。",
)
ENGINES = {
    "Open JTalk (Mei)": "ja;rate=165;half_tone=-1.5;all_pass=0.55",  # Hina's card voice
    KOKORO: "kokoro:jf_alpha;rate=165",  # Hina's rate
    "espeak-ng (kana)": "ja;engine=system",
}


async def measure(rounds: int, *, kokoro: bool) -> dict[str, tuple[list[float], list[float]]]:
    """Per engine: the real-time factors and the render times (s) of every line said."""
    engines = {name: voice for name, voice in ENGINES.items() if kokoro or name != KOKORO}
    figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in engines}
    with tempfile.TemporaryDirectory(prefix="madoi-voice-rtf-") as tmp:
        speaker = Pyttsx3Speaker(None, output_dir=Path(tmp) / "speech")
        if kokoro:
            with_kokoro(speaker, Path(tmp) / "data")
        await speaker.start()
        try:
            await speaker.speak(Utterance("あ", voice="ja"))  # Open JTalk loads just after the start
            if not speaker.openjtalk_available:
                raise SystemExit(f"Open JTalk does not speak here: {speaker.status.reason}")
            if kokoro:
                said = await speaker.speak(Utterance("あ。", voice=ENGINES[KOKORO]))  # waits for Kokoro's load
                if said.voice != "kokoro:jf_alpha":
                    raise SystemExit(f"Kokoro does not speak here: {speaker.status.reason}")
            for round_ in range(rounds + 1):
                for name, voice in engines.items():
                    said = await say_lines(speaker, SENTENCES, voice)
                    if round_ > 0:  # the first round warms up
                        figures[name][0].extend(line.rtf for line in said)
                        figures[name][1].extend(line.took for line in said)
        finally:
            await speaker.stop()
    return figures


async def first_audio(*, pipelined: bool) -> LineTiming:
    """:data:`LINE` said by Kokoro, sentence by sentence or the whole line rendered first."""
    with tempfile.TemporaryDirectory(prefix="madoi-kokoro-first-") as tmp:
        speaker = Pyttsx3Speaker(None, player=PLAYER)
        speaker.openjtalk_enabled = False
        with_kokoro(speaker, Path(tmp))
        original, clause = speaker_module.sentences, speaker_module.first_clause
        if not pipelined:  # the whole line, rendered before it plays
            speaker_module.sentences = lambda text, _max: [text]
            speaker_module.first_clause = lambda chunks, longer_than=0: chunks
        try:
            await speaker.start()
            await speaker.speak(Utterance("あ。", voice=ENGINES[KOKORO]))  # Kokoro's load is not the line's
            return await timed_line(speaker, Utterance(LINE, voice=ENGINES[KOKORO], speaker_id="bench"),
                                    expect="kokoro:jf_alpha")
        finally:
            speaker_module.sentences, speaker_module.first_clause = original, clause
            await speaker.stop()


def first_audio_main(runs: int) -> None:
    cases: dict[bool, list[LineTiming]] = {True: [], False: []}
    for _ in range(runs):
        for pipelined in (True, False):
            cases[pipelined].append(asyncio.run(first_audio(pipelined=pipelined)))
    first, end, gaps = medians(cases[True])
    whole_first, whole_end, _ = medians(cases[False])
    report(f"Kokoro, line start -> first audio, sentence by sentence, {runs} runs", 1000 * first, "ms",
           "the whole line first", 1000 * whole_first)
    report(f"Kokoro, line start -> its end, sentence by sentence, {runs} runs", 1000 * end, "ms",
           "the whole line first", 1000 * whole_end)
    report(f"Kokoro, silence between sentences, sentence by sentence, {len(gaps)} gaps",
           1000 * statistics.median(gaps), "ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-kokoro", action="store_true", help="Open JTalk and espeak-ng only")
    parser.add_argument("--first-audio", action="store_true", help="Kokoro's first audio, pipelined or not")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    if args.first_audio:
        first_audio_main(args.runs)
        return
    figures = asyncio.run(measure(args.rounds, kokoro=not args.no_kokoro))
    espeak_rtf = statistics.median(figures["espeak-ng (kana)"][0])
    espeak_took = statistics.median(figures["espeak-ng (kana)"][1])
    for name, (rtfs, took) in figures.items():
        report(f"real-time factor, {name}, {len(rtfs)} lines", statistics.median(rtfs), "x real time",
               "espeak-ng (kana)", espeak_rtf)
        report(f"line start to its audio written, {name}, p50", 1000 * statistics.median(took), "ms",
               "espeak-ng (kana)", 1000 * espeak_took)


if __name__ == "__main__":
    main()
