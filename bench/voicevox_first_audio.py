"""Time from a line's start to its first audio through a VOICEVOX-compatible engine: sentence pipelining (each
sentence synthesised while the one before it plays, as the speaker does) against the whole line synthesised in
one request before anything plays (what a client of the engine does without pipelining), in one run.

The engine is companions/testing/voicevox_engine.py (VOICEVOX ENGINE's own API) taking ``--rtf`` of each audio's
length to synthesise it (a real VOICEVOX on 2 CPU cores is about 0.2-0.5), the sound device a player that lasts as
long as the WAV. Both cases go through the app's real speaker (app/devices/speaker.py), ``--runs`` times each,
alternating; the medians print, and the gaps between sentences (silence heard) with pipelining.

Run: ``python bench/voicevox_first_audio.py [--runs 5] [--rtf 0.3]`` (note ``uptime`` with every figure).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path

from _report import report  # puts the repository on sys.path first

import app.devices.speaker as speaker_module
from app.devices.speaker import Pyttsx3Speaker
from companions.devices.ports import Utterance
from companions.testing.voicevox_engine import VoicevoxTestEngine
from companions.wire.bus import InProcessBus

PLAYER = "import sys, time, wave\nw = wave.open(sys.argv[1])\ntime.sleep(w.getnframes() / w.getframerate())\n"
LINE = ("おはよう、今日はいい天気だね。午後から少し雲が出るみたいだけど、雨は降らないって。"
        "散歩に行くなら、お昼ごはんの前がいいかもしれないね。")


async def _first_audio(engine: VoicevoxTestEngine, *, pipelined: bool) -> tuple[float, float, list[float]]:
    """(line start -> first audio, line start -> end, silences between sentences) of one line, in seconds."""
    bus = InProcessBus()
    speaker = Pyttsx3Speaker(bus, player=[sys.executable, "-c", PLAYER], engine_urls=[engine.base_url])
    speaker.openjtalk_enabled = False
    played: list[tuple[float, Path | None]] = []
    lock = threading.Lock()

    def listen(path: Path | None) -> None:
        with lock:
            played.append((time.monotonic(), path))

    speaker.playback_listeners.append(listen)
    original = speaker_module.sentences
    if not pipelined:
        speaker_module.sentences = lambda text, _max: [text]  # the whole line, one request
    try:
        await speaker.start()
        await speaker.engines_searched()
        started = time.monotonic()
        result = await speaker.speak(Utterance(LINE, voice="voicevox:3", speaker_id="bench"))
        ended = time.monotonic()
    finally:
        speaker_module.sentences = original
        await speaker.stop()
        await bus.aclose()
    if not result.success or not result.voice.startswith("voicevox"):
        raise SystemExit(f"the engine did not say the line: {result.reason}")
    starts = [at for at, path in played if path is not None]
    ends = [at for at, path in played if path is None]
    gaps = [starts[i + 1] - ends[i] for i in range(len(starts) - 1)]
    return starts[0] - started, ended - started, gaps


async def main(runs: int, rtf: float) -> None:
    async with VoicevoxTestEngine(synthesis_rtf=rtf) as engine:
        await _first_audio(engine, pipelined=True)  # warm: imports, the player's first start
        with_pipe: list[tuple[float, float, list[float]]] = []
        without: list[tuple[float, float, list[float]]] = []
        for _ in range(runs):
            with_pipe.append(await _first_audio(engine, pipelined=True))
            without.append(await _first_audio(engine, pipelined=False))
    first_with = statistics.median(r[0] for r in with_pipe)
    first_without = statistics.median(r[0] for r in without)
    print(f"# {len(LINE)} characters, {LINE.count('。')} sentences; engine synthesis at RTF {rtf:g}; {runs} runs each")
    report("first audio, whole line in one request (no pipelining)", first_without * 1000, "ms")
    report("first audio, sentence pipelining", first_with * 1000, "ms", "no pipelining", first_without * 1000)
    report("whole line heard, no pipelining", statistics.median(r[1] for r in without) * 1000, "ms")
    report("whole line heard, sentence pipelining", statistics.median(r[1] for r in with_pipe) * 1000, "ms",
           "no pipelining", statistics.median(r[1] for r in without) * 1000)
    gaps = [g for r in with_pipe for g in r[2]]
    report("silence between sentences with pipelining, median", statistics.median(gaps) * 1000, "ms")
    report("silence between sentences with pipelining, max", max(gaps) * 1000, "ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rtf", type=float, default=0.3)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.rtf))
