"""Settings saved while Madoi runs apply at once, on the real runtime: a companion's own model
from its next request (the local OpenAI-compatible test server sees it), its own voice and the new speech rate on
its next line (real pyttsx3 + espeak-ng writing WAV files), the bridge on a new port (a real WebSocket client),
and new knowledge folders indexed."""

from __future__ import annotations

import asyncio
import socket
import wave
from pathlib import Path

import pytest
import websockets

from app.cards.checks import CompanionChecks
from app.runtime.runtime import Runtime, SettingsNotApplied
from app.search.service import build_search_service
from app.settings.model import CompanionSettings, Settings, load_settings
from companions.llm.types import ChatMessage, ChatRequest, complete
from companions.testing.openai_server import OpenAITestServer, text_reply
from tests.companions.search_doubles import HashingEmbedder
from tests.conftest import free_port


def _with(settings: Settings, section: str, **fields: object) -> Settings:
    return settings.model_copy(update={section: getattr(settings, section).model_copy(update=fields)})


def _choose(settings: Settings, companion_id: str, **choice: object) -> Settings:
    return settings.model_copy(update={"companions": {**settings.companions,
                                                      companion_id: CompanionSettings.model_validate(choice)}})


async def test_a_companion_thinks_with_its_chosen_model_from_its_next_request(madoi_home: Path) -> None:
    async with OpenAITestServer(models=["qwen-small", "llama-big"]) as server:
        loaded = load_settings()
        loaded.settings = _with(loaded.settings, "llm", base_url=server.base_url, model="qwen-small")
        runtime = Runtime(loaded)
        await runtime.start()
        try:
            akari, hina = runtime.parts.cast.companions["akari"], runtime.parts.cast.companions["hina"]
            hina_model = hina.model
            await runtime.apply_settings(_choose(runtime.settings, "akari", model="llama-big"))
            assert akari.model.name == "llama-big"
            assert akari.worker.model is akari.model  # the turn loop thinks with it too
            assert hina.model is hina_model  # the others keep theirs
            server.script(text_reply("やあ！"))
            answer = await complete(akari.model, ChatRequest(messages=(ChatMessage.user("こんにちは"),)))
            assert answer.message.text == "やあ！"
            assert server.chat_requests()[-1].body["model"] == "llama-big"
            await runtime.apply_settings(_choose(runtime.settings, "akari"))  # back to what the card says
            assert akari.model.name == "qwen-small"
        finally:
            await runtime.stop()


def _seconds(wav: str) -> float:
    with wave.open(wav, "rb") as audio:
        return audio.getnframes() / audio.getframerate()


async def test_the_chosen_voice_and_a_new_rate_are_heard_on_the_next_line(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        hina = runtime.parts.cast.companions["hina"]
        hina.language = "en"
        first = await hina.builtins.say("The stars are very bright over the harbour tonight.")
        assert first.voice == "gmw/en-us+f3"  # the card's en-us+f3
        assert first.wav_path is not None
        settings = _choose(runtime.settings, "hina", voice={"en": "gmw/en-gb-scotland+m3"})
        await runtime.apply_settings(_with(settings, "voice", rate=runtime.settings.voice.rate * 2))
        second = await hina.builtins.say("The stars are very bright over the harbour tonight.")
        assert second.voice == "gmw/en-gb-scotland+m3"
        assert second.wav_path is not None
        # Twice the rate: the same sentence takes clearly less time (espeak-ng's own timing, not exactly half).
        assert _seconds(second.wav_path) < 0.75 * _seconds(first.wav_path)
        hina.language = "ja"  # a language without a choice: the card's voice
        third = await hina.builtins.say("こんにちは")
        assert third.voice == "openjtalk/mei"
    finally:
        await runtime.stop()


async def _connects(port: int) -> bool:
    try:
        async with websockets.connect(f"ws://127.0.0.1:{port}/", open_timeout=3):
            return True
    except OSError:
        return False


async def test_the_bridge_moves_to_a_new_port_and_stays_when_the_new_one_is_taken(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first_port = free_port()
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(first_port))  # the tests' default (0) turns the bridge off
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert await _connects(first_port)
        second_port = free_port()
        await runtime.apply_settings(_with(runtime.settings, "bridge", port=second_port))
        assert runtime.parts.bridge is not None
        assert runtime.parts.bridge.port == second_port
        assert await _connects(second_port)
        assert not await _connects(first_port)
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            busy = taken.getsockname()[1]
            with pytest.raises(SettingsNotApplied) as problem:
                await runtime.apply_settings(_with(runtime.settings, "bridge", port=busy))
        assert f"cannot listen on 127.0.0.1:{busy}" in str(problem.value)
        assert f"keeps listening on port {second_port}" in str(problem.value)
        assert await _connects(second_port)  # the old bridge still serves
        await runtime.apply_settings(_with(runtime.settings, "bridge", port=0))  # turned off
        assert runtime.parts.bridge is None
        assert not await _connects(second_port)
    finally:
        await runtime.stop()


async def test_new_knowledge_folders_are_indexed_at_once(madoi_home: Path, tmp_path: Path) -> None:
    loaded = load_settings()
    service = build_search_service(loaded.settings, loaded.paths.ensure(), embedder=HashingEmbedder())
    await service.start()  # the samples' first pass runs
    try:
        folder = tmp_path / "garden"
        folder.mkdir()
        (folder / "tomatoes.txt").write_text("The greenhouse tomatoes ripen in late July.", encoding="utf-8")
        await asyncio.wait_for(service.use_folders([folder]), 60)
        response = await service.engine.search("When do the tomatoes ripen?", limit=1)
        assert response.hits[0].source.endswith("tomatoes.txt")
        assert service.indexed is not None
        assert service.indexed.documents == 5  # the four samples and the new file
        await asyncio.wait_for(service.use_folders([]), 60)  # the folder taken out of the settings again
        response = await service.engine.search("When do the tomatoes ripen?", limit=5)
        assert not any(hit.source.endswith("tomatoes.txt") for hit in response.hits)
        assert (await service.engine.stats())["documents"] == 4
    finally:
        await service.stop()


async def test_the_companions_tab_sees_the_running_apps_companions_and_voices(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    checks = CompanionChecks.for_runtime(runtime)
    assert [c.id for c in checks.cards()] == ["akari", "hina", "souta"]  # from the card files before the start
    assert not checks.can_speak
    await runtime.start()
    try:
        assert [c.id for c in checks.cards()] == list(runtime.parts.cast.companions)
        ids = [v.id for v in checks.voices("ja")]
        assert ids[:3] == ["openjtalk", "jpx/ja", "jpx/ja+f1"]  # Open JTalk's Mei, then espeak-ng's and its variants
        assert all(v.startswith("jpx/ja") for v in ids[1:])
        spoken = len(list((madoi_home / "speech").glob("*.wav")))
        await checks.say(runtime.settings.voice, "こんにちは", "jpx/ja+f3")  # through the app's one speaker
        assert len(list((madoi_home / "speech").glob("*.wav"))) == spoken + 1
    finally:
        await runtime.stop()
