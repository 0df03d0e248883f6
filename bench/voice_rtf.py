"""The real-time factor of the Japanese voices, as the app voices a line: Open JTalk's Mei against espeak-ng.

The app's speaker (app/devices/speaker.py, audio to WAV files: no playback) says the same 12 Japanese sentences with
each engine: Open JTalk (the default for Japanese, with Hina's card voice) and espeak-ng (``engine=system``: the
kanji read into kana first, as before Open JTalk). Real-time factor = time to render a line / the line's audio
length (lower is quicker; 1.0 is as long as the speech). After one warm-up round, ``--rounds`` rounds; the figures
are the medians over every line said. Also the median time from a line's start to its whole audio written (no
playback), which is what a listener waits before the first word of a one-sentence line.

Run: ``python bench/voice_rtf.py [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from _report import report

from app.devices.speaker import Pyttsx3Speaker
from companions.devices.ports import Utterance

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
    "espeak-ng (kana)": "ja;engine=system",
}


async def measure(rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per engine: the real-time factors and the render times (s) of every line said."""
    figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in ENGINES}
    with tempfile.TemporaryDirectory(prefix="madoi-voice-rtf-") as tmp:
        speaker = Pyttsx3Speaker(None, output_dir=Path(tmp))
        await speaker.start()
        try:
            await speaker.speak(Utterance("あ", voice="ja"))  # Open JTalk loads just after the start
            if not speaker.openjtalk_available:
                raise SystemExit(f"Open JTalk does not speak here: {speaker.status.reason}")
            for round_ in range(rounds + 1):
                for name, voice in ENGINES.items():
                    for sentence in SENTENCES:
                        start = time.perf_counter()
                        result = await speaker.speak(Utterance(sentence, voice=voice, speaker_id="bench"))
                        took = time.perf_counter() - start
                        if not result.success or result.skipped or not result.duration_s:
                            raise SystemExit(f"{name} did not say {sentence!r}: {result.reason}")
                        if round_ > 0:  # the first round warms up
                            figures[name][0].append(took / result.duration_s)
                            figures[name][1].append(took)
        finally:
            await speaker.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.rounds))
    espeak_rtf = statistics.median(figures["espeak-ng (kana)"][0])
    espeak_took = statistics.median(figures["espeak-ng (kana)"][1])
    for name, (rtfs, took) in figures.items():
        report(f"real-time factor, {name}, {len(rtfs)} lines", statistics.median(rtfs), "x real time",
               "espeak-ng (kana)", espeak_rtf)
        report(f"line start to its audio written, {name}, p50", 1000 * statistics.median(took), "ms",
               "espeak-ng (kana)", 1000 * espeak_took)


if __name__ == "__main__":
    main()
