"""Settings saved while Madoi runs reach the runtime: an endpoint connects the companions at once, a new camera
source is checked again; a part that cannot start is reported, not fatal."""

from __future__ import annotations

from pathlib import Path

from app.runtime.runtime import Runtime
from app.settings.model import Settings, load_settings
from companions.llm.types import ChatMessage, ChatRequest, complete
from companions.llm.unavailable import UnavailableModel
from companions.testing.openai_server import OpenAITestServer, text_reply
from tests.app.media import write_test_video


def _with(settings: Settings, section: str, **fields: object) -> Settings:
    return settings.model_copy(update={section: getattr(settings, section).model_copy(update=fields)})


async def test_an_endpoint_saved_while_running_lets_every_companion_talk(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert runtime.parts.cast is not None
        problem = await runtime.models_resolved()  # found after the start: the window does not wait for it
        assert problem is not None
        assert "No LLM is configured" in problem
        async with OpenAITestServer(models=["qwen-test"]) as server:
            server.script(text_reply("こんばんは！"))
            await runtime.apply_settings(_with(runtime.settings, "llm", base_url=server.base_url))
            assert runtime.model_problem() is None
            assert runtime.parts.models.resolution is not None
            assert runtime.parts.models.resolution.source == "settings"
            assert runtime.settings.llm.base_url == server.base_url
            akari = runtime.parts.cast.companions["akari"]
            assert not isinstance(akari.model, UnavailableModel)
            assert akari.worker.model is akari.model  # the turn loop thinks with it too
            answer = await complete(akari.model, ChatRequest(messages=(ChatMessage.user("こんばんは"),)))
            assert answer.message.text == "こんばんは！"
            server.assert_used_up()
    finally:
        await runtime.stop()


async def test_clearing_the_endpoint_brings_the_reason_back(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        # A named model on an endpoint is built without a round trip (a failure shows on the first request).
        await runtime.apply_settings(_with(runtime.settings, "llm", base_url="http://127.0.0.1:9/v1", model="m"))
        assert runtime.model_problem() is None
        await runtime.apply_settings(_with(runtime.settings, "llm", base_url=None, model=None))
        problem = await runtime.reconnect_models()  # nothing configured, nothing detected: the reason
        assert problem is not None
        assert "No LLM is configured" in problem
        assert runtime.parts.cast is not None
        assert all(isinstance(c.model, UnavailableModel) for c in runtime.parts.cast)
    finally:
        await runtime.stop()


async def test_a_new_camera_source_is_checked_again(madoi_home: Path, tmp_path: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert runtime.parts.devices is not None
        assert not runtime.parts.devices.camera.status.available
        video = write_test_video(tmp_path / "cam.avi")
        await runtime.apply_settings(_with(runtime.settings, "camera", source=str(video)))
        assert runtime.parts.devices.camera.source == str(video)
        frame = await runtime.parts.devices.camera.capture()
        assert (frame.width, frame.height) == (640, 480)
    finally:
        await runtime.stop()


async def test_a_part_that_cannot_start_is_reported_and_the_rest_runs(madoi_home: Path) -> None:
    loaded = load_settings()
    (loaded.paths.data_dir / "search.sqlite3").mkdir(parents=True)  # the index file cannot be opened
    runtime = Runtime(loaded)
    await runtime.start()
    try:
        assert runtime.parts.search is None
        assert any(p.startswith("search not available: ") for p in runtime.loaded.problems)
        assert runtime.parts.cast is not None
        assert runtime.parts.conversation_manager is not None
        message = runtime.parts.conversations.send("hello")
        await runtime.bus.drain()
        assert runtime.parts.conversations.active_id is not None
        stored = await runtime.store.messages(runtime.parts.conversations.active_id)
        assert [m.message.params.id for m in stored] == [message.params.id]
    finally:
        await runtime.stop()


async def test_switching_the_language_switches_the_companions_prompts_at_once(madoi_home: Path) -> None:
    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        akari = runtime.parts.cast.companions["akari"]
        assert runtime.settings.general.language == "ja"
        assert akari.context()[0].text.startswith("あなたは「あかり」")
        await runtime.apply_settings(_with(runtime.settings, "general", language="en"))
        assert akari.context()[0].text.startswith('You are "Akari"')  # no restart
        assert akari.name == "Akari"
    finally:
        await runtime.stop()
