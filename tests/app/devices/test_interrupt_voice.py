"""Interrupt silences the voice, in the running app: a companion speaking a long line (real pyttsx3 + espeak-ng,
played by a player process that takes real time) is cut off within 200 ms by a user message or by Interrupt.

There is no sound card here, so the player is a stand-in found on PATH as ``pw-play``: a real process that plays a
WAV file for its duration, holding a socket to the test open meanwhile, so the test sees the moment the process is
gone (its socket closes when it is terminated).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import pytest

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.conversation.readmodel import ConversationReadModel
from companions.devices.ports import SpeakingChanged
from companions.testing.openai_server import OpenAITestServer
from tests.app.playback import LongLines, Players

TRIES = 10


async def test_a_user_message_or_interrupt_silences_the_voice_within_200_ms(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, players: Players) -> None:
    monkeypatch.delenv("MADOI_VOICE_OUTPUT_DIR")  # played aloud (by the stand-in player), not written to files
    async with OpenAITestServer(models=["demo-model"], fallback=LongLines()) as server:
        monkeypatch.setenv("MADOI_LLM_BASE_URL", server.base_url)
        runtime = Runtime(load_settings())
        await runtime.start()
        silent = asyncio.Event()
        runtime.bus.subscribe("events", lambda e: silent.set()
                              if isinstance(e, SpeakingChanged) and not e.speaking else None, name="test")
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        to_silence: list[float] = []
        to_speaking_off: list[float] = []
        try:
            runtime.parts.conversations.send("Akari, tell me about the stars.", to=["akari"])
            for attempt in range(TRIES):
                await players.wait_for(lambda: players.playing == 1, timeout=30)
                silent.clear()
                ended = len(players.ended_at)
                begun = time.perf_counter()
                if attempt % 2 == 0:  # the user cuts in with a new message (which opens the next turn)
                    runtime.parts.conversations.send("Akari, tell me about the stars.", to=["akari"])
                else:
                    runtime.parts.control.interrupt()  # Esc
                await players.wait_for(lambda e=ended: len(players.ended_at) > e, timeout=5)
                to_silence.append(players.ended_at[ended] - begun)
                async with asyncio.timeout(5):
                    await silent.wait()
                to_speaking_off.append(time.perf_counter() - begun)
                if attempt % 2 == 1:
                    await talk.wait_for(lambda v: v.ended_reason == "interrupted", timeout=5)
                    runtime.parts.conversations.send("Akari, go on about the stars.", to=["akari"])
        finally:
            talk.close()
            await runtime.stop()
    ms = sorted(round(t * 1000) for t in to_silence)
    print(f"\nuser message / Interrupt -> player process gone, {TRIES} tries: p50 {statistics.median(ms):.0f} ms, "
          f"max {max(ms)} ms ({ms}); -> SpeakingChanged(false): max {max(to_speaking_off) * 1000:.0f} ms")
    assert players.started >= TRIES
    assert max(to_silence) < 0.2, ms
    assert max(to_speaking_off) < 0.2, to_speaking_off
