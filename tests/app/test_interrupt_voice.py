"""Interrupt silences the voice, in the running app: a companion speaking a long line (real pyttsx3 + espeak-ng,
played by a player process that takes real time) is cut off within 200 ms by a user message or by Interrupt.

There is no sound card here, so the player is a stand-in found on PATH as ``pw-play``: a real process that plays a
WAV file for its duration, holding a socket to the test open meanwhile, so the test sees the moment the process is
gone (its socket closes when it is terminated).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.runtime import Runtime
from app.settings import load_settings
from companions.conversation.readmodel import ConversationReadModel
from companions.devices import SpeakingChanged
from companions.testing.openai_server import OpenAITestServer
from companions.testing.openai_server.demo_director import DemoDirector
from companions.testing.openai_server.replies import Reply, tool_call_reply

LONG_LINE = ("Let me tell you everything I know about the stars tonight, from the first one that appears after "
             "sunset to the last one that fades at dawn, slowly and with all the details.")
TRIES = 10
PLAYER = """#!{python} -S
import socket, sys, time, wave
with wave.open(sys.argv[-1], "rb") as w:
    seconds = w.getnframes() / w.getframerate()
link = socket.create_connection(("127.0.0.1", {port}))  # open while this process plays
time.sleep(seconds)
link.close()
"""


class LongLines(DemoDirector):
    """The demo's model, except that every line is long (it takes seconds to say)."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = super().__call__(body)
        if any(t.get("function", {}).get("name") == "speak" for t in body.get("tools") or []) \
                and not any(m.get("role") == "tool" for m in body.get("messages") or [] if isinstance(m, dict)) \
                and body.get("response_format") is None and body.get("tool_choice") in (None, "auto"):
            return tool_call_reply(("speak", {"message": LONG_LINE, "emotion": "neutral"}))
        return reply


class Players:
    """Counts the stand-in player processes that are playing; an event per start and per end."""

    def __init__(self) -> None:
        self.playing = 0
        self.started = 0
        self.ended_at: list[float] = []
        self._changed = asyncio.Event()
        self.server: asyncio.Server | None = None

    async def _on_player(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.playing += 1
        self.started += 1
        self._changed.set()
        await reader.read()  # EOF: the process ended (played to the end, or terminated)
        self.ended_at.append(time.perf_counter())
        self.playing -= 1
        self._changed.set()
        writer.close()

    async def wait_for(self, predicate: Any, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()


@pytest.fixture
async def players(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    players = Players()
    players.server = await asyncio.start_server(players._on_player, "127.0.0.1", 0)
    port = players.server.sockets[0].getsockname()[1]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    player = bin_dir / "pw-play"
    player.write_text(PLAYER.format(python=sys.executable, port=port))
    player.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    yield players
    players.server.close()


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
