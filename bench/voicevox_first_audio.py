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

from _report import report  # puts the repository on sys.path first
from _speech import LINE, PLAYER, LineTiming, medians, timed_line

import app.devices.speaker as speaker_module
from app.devices.speaker import Pyttsx3Speaker
from companions.devices.ports import Utterance
from companions.testing.voicevox_engine import VoicevoxTestEngine
from companions.wire.bus import InProcessBus


async def _first_audio(engine: VoicevoxTestEngine, *, pipelined: bool) -> LineTiming:
    """:data:`LINE` said through ``engine``, sentence by sentence or in one request."""
    bus = InProcessBus()
    speaker = Pyttsx3Speaker(bus, player=PLAYER, engine_urls=[engine.base_url])
    speaker.openjtalk_enabled = False
    original = speaker_module.sentences
    if not pipelined:
        speaker_module.sentences = lambda text, _max: [text]  # the whole line, one request
    try:
        await speaker.start()
        await speaker.engines_searched()
        return await timed_line(speaker, Utterance(LINE, voice="voicevox:3", speaker_id="bench"), expect="voicevox")
    finally:
        speaker_module.sentences = original
        await speaker.stop()
        await bus.aclose()


async def main(runs: int, rtf: float) -> None:
    async with VoicevoxTestEngine(synthesis_rtf=rtf) as engine:
        await _first_audio(engine, pipelined=True)  # warm: imports, the player's first start
        with_pipe: list[LineTiming] = []
        without: list[LineTiming] = []
        for _ in range(runs):
            with_pipe.append(await _first_audio(engine, pipelined=True))
            without.append(await _first_audio(engine, pipelined=False))
    first_with, end_with, gaps = medians(with_pipe)
    first_without, end_without, _ = medians(without)
    print(f"# {len(LINE)} characters, {LINE.count('。')} sentences; engine synthesis at RTF {rtf:g}; {runs} runs each")
    report("first audio, whole line in one request (no pipelining)", first_without * 1000, "ms")
    report("first audio, sentence pipelining", first_with * 1000, "ms", "no pipelining", first_without * 1000)
    report("whole line heard, no pipelining", end_without * 1000, "ms")
    report("whole line heard, sentence pipelining", end_with * 1000, "ms", "no pipelining", end_without * 1000)
    report("silence between sentences with pipelining, median", statistics.median(gaps) * 1000, "ms")
    report("silence between sentences with pipelining, max", max(gaps) * 1000, "ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rtf", type=float, default=0.3)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.rtf))
