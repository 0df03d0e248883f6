"""Talking to the companions in the running app, real parts throughout: espeak-ng speech in a WAV file
is the microphone (played in real time), the WebRTC detector, PocketSphinx, the conversation, the OpenAI-compatible
test server's scripted companions, pyttsx3 + espeak-ng for their voice and a player process that takes real time
(a stand-in on PATH: there is no sound card here, see tests/app/playback.py).

The room: what the speaker plays comes back into the microphone (``make_room``), as laptop speakers do."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from app.voice_input.microphone import FileMicrophone, read_pcm16k
from app.voice_input.wiring import make_room
from companions.testing.openai_server import OpenAITestServer
from companions.testing.openai_server.demo_director import DemoDirector
from companions.voice_input.events import SpeechHeard
from companions.wire.bus import BusItem
from companions.wire.protocol import Message
from tests.app.playback import LongLines, Players
from tests.app.speech_audio import clip, write_wav

QUESTION = "what is the weather like tomorrow"


class Heard:
    def __init__(self) -> None:
        self.items: list[BusItem] = []
        self.changed = asyncio.Event()

    def __call__(self, item: BusItem) -> None:
        self.items.append(item)
        self.changed.set()

    def messages(self) -> list[Message]:
        return [i for i in self.items if isinstance(i, Message)]

    def speech(self) -> list[SpeechHeard]:
        return [i for i in self.items if isinstance(i, SpeechHeard)]

    async def until(self, predicate: Any, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()


def _voice_input(monkeypatch: pytest.MonkeyPatch, device: Path) -> None:
    monkeypatch.setenv("MADOI_VOICE_INPUT_DEVICE", f"file:{device}")
    monkeypatch.setenv("MADOI_VOICE_INPUT_END_SILENCE_S", "0.5")


async def test_what_the_user_says_is_sent_and_a_companion_answers(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spoken = clip(QUESTION, tmp_path / "user.wav", before_s=1.0, after_s=30.0)
    _voice_input(monkeypatch, spoken.path)
    async with OpenAITestServer(models=["demo-model"], fallback=DemoDirector()) as server:
        monkeypatch.setenv("MADOI_LLM_BASE_URL", server.base_url)
        runtime = Runtime(load_settings())
        heard = Heard()
        runtime.bus.subscribe(("messages", "events"), heard, name="test")
        await runtime.start()
        try:
            voice_input = runtime.parts.devices.voice_input
            assert voice_input is not None
            assert voice_input.state == "off"  # off until the user turns the microphone on
            await voice_input.switch(True)  # the status bar's click
            user = runtime.settings.general.user_name
            await heard.until(lambda: any(m.params.from_ != user for m in heard.messages()), timeout=60)
            companions = set(runtime.parts.cast.companions)
        finally:
            await runtime.stop()
    said = [m for m in heard.messages() if m.params.from_ == user]
    assert [m.params.message for m in said] == [QUESTION]
    assert any(not h.final for h in heard.speech())  # the words showed as the user spoke
    final = [h for h in heard.speech() if h.final]
    assert final[0].sent
    assert final[0].message_id == said[0].params.id
    answer = next(m for m in heard.messages() if m.params.from_ != user)
    assert answer.params.from_ in companions


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
async def test_the_companions_never_hear_themselves_but_the_user_cuts_them_off(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, players: Players) -> None:
    import numpy as np

    monkeypatch.delenv("MADOI_VOICE_OUTPUT_DIR")  # played aloud (by the stand-in player), into the room
    room = write_wav(tmp_path / "room.wav", np.zeros(16_000, dtype=np.float32))  # nobody says anything
    _voice_input(monkeypatch, room)
    user_words = read_pcm16k(clip(QUESTION, tmp_path / "user.wav", before_s=0.0, after_s=0.0).path)
    async with OpenAITestServer(models=["demo-model"], fallback=LongLines()) as server:
        monkeypatch.setenv("MADOI_LLM_BASE_URL", server.base_url)
        runtime = Runtime(load_settings())
        heard = Heard()
        runtime.bus.subscribe(("messages", "events"), heard, name="test")
        await runtime.start()
        try:
            voice_input = runtime.parts.devices.voice_input
            assert voice_input is not None
            microphone = voice_input.microphone
            assert isinstance(microphone, FileMicrophone)
            make_room(runtime.parts.devices.speaker, microphone, echo_gain=0.25)  # 12 dB down: laptop speakers
            await voice_input.switch(True)
            runtime.parts.conversations.send("Akari, tell me about the stars.", to=["akari"])
            await players.wait_for(lambda: players.started == 1, timeout=60)
            await players.wait_for(lambda: players.playing == 0, timeout=60)  # her first sentence played out
            assert voice_input.barge_ins == []  # her own voice in the microphone never cut her off
            assert heard.speech() == []
            assert voice_input.echo.suppressed > 0  # it was heard, and taken for what it was
            await players.wait_for(lambda: players.playing == 1, timeout=30)  # the next sentence of her line
            ended = len(players.ended_at)
            onset = time.monotonic() + 0.1
            microphone.add(user_words, onset)  # the user speaks over her
            await players.wait_for(lambda: len(players.ended_at) > ended, timeout=10)
            cut = time.monotonic()
            user = runtime.settings.general.user_name
            # Her voice and the user's overlap for a moment, so the first word may be lost; the rest is heard.
            await heard.until(lambda: any(m.params.from_ == user and "weather like tomorrow" in m.params.message
                                          for m in heard.messages()), timeout=30)
        finally:
            await runtime.stop()
    assert len(voice_input.barge_ins) == 1
    barge_in = voice_input.barge_ins[0]
    print(f"\nbarge-in: voice onset -> interrupt {1000 * (barge_in.at - onset):.0f} ms, "
          f"-> player gone within {1000 * (cut - onset):.0f} ms (load-dependent)")
    assert barge_in.onset >= onset - 0.1  # it was the user's voice that started it, not her own before


def _left_on(home: Path, keep_on: bool) -> None:
    """The settings of a Madoi that last quit with its microphone on."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.toml").write_text(f"[voice_input]\non = true\nkeep_on = {str(keep_on).lower()}\n", "utf-8")


@pytest.mark.parametrize("keep_on", [False, True])
async def test_a_microphone_left_on_starts_off_unless_the_user_chose_to_keep_it_on(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keep_on: bool) -> None:
    spoken = clip("are you how are you tonight", tmp_path / "room.wav", before_s=0.3, after_s=5.0)  # the room
    _voice_input(monkeypatch, spoken.path)
    _left_on(madoi_home, keep_on)
    runtime = Runtime(load_settings())
    heard = Heard()
    runtime.bus.subscribe(("messages", "events"), heard, name="test")
    await runtime.start()
    try:
        voice_input = runtime.parts.devices.voice_input
        assert voice_input is not None
        assert voice_input.state == ("listening" if keep_on else "off")
        assert runtime.settings.voice_input.on is keep_on  # what the status bar's switch shows
        if not keep_on:
            await asyncio.sleep(spoken.end_s + 1.5)  # the room's words would have been recognized and sent by now
    finally:
        await runtime.stop()
    if not keep_on:
        assert heard.messages() == []
        assert heard.speech() == []
