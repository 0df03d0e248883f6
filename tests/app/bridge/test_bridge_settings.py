"""The bridge's settings: the default dialect for clients that do not say, the clients' grace, and the web pages
allowed, which apply to the running bridge as soon as they are saved."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.bridge import build_bridge
from app.settings.model import Settings
from companions.wire.bus import InProcessBus
from companions.wire.query_broker import QueryBroker
from tests.app.bridge_app import COMPANIONS, App
from tests.app.bridge_client import admitted
from tests.app.kyoko_clients import LegacyKyokoClient, running
from tests.conftest import free_port


async def test_the_settings_choose_the_default_dialect_and_the_clients_grace() -> None:
    port = free_port()
    settings = Settings.model_validate({"bridge": {"port": port, "dialect": "legacy", "client_timeout_s": 0.2}})
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    bridge = build_bridge(bus, broker, settings, reserved_ids=lambda: COMPANIONS)
    assert bridge is not None
    await bridge.start()
    app = App(bus, broker, bridge)
    try:
        async with running(LegacyKyokoClient, app.url(), companion_id="akari") as kyoko:  # no URL parameters
            await admitted(app.bridge, 1)
            await app.heard(await kyoko.speak_to_companion("見て"))  # flat frames from the start: it stands for akari
            seen = await app.ask("akari", "vision")  # kyoko answers
            kyoko.companion_id = "nobody"  # it no longer answers akari's queries
            started = asyncio.get_running_loop().time()
            slow = await app.ask("akari", "vision")  # the app's camera, after the 0.2 s grace
            waited = asyncio.get_running_loop().time() - started
        assert 0.2 <= waited < 2.0
        assert seen.result is not None
        assert seen.result.body["mime"] == "image/png"
        assert kyoko.captures == 1
        assert slow.result is not None
        assert slow.result.body == {"by": "app"}
    finally:
        await bridge.stop()
        await broker.aclose()
        await bus.aclose()


def test_the_environment_sets_the_dialect_and_the_types_clients_answer_first() -> None:
    from app.settings.environment import environment_settings

    overrides = environment_settings({"MADOI_BRIDGE_DIALECT": "legacy", "MADOI_BRIDGE_CLIENT_ANSWERS": "vision, speak"})
    bridge = Settings.model_validate(overrides).bridge
    assert (bridge.dialect, bridge.client_answers) == ("legacy", ["vision", "speak"])
    assert Settings().bridge.dialect == "reference"  # the reference firehose's, by default


async def test_web_pages_allowed_in_the_saved_settings_connect_at_once(madoi_home: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    from companions.llm.scripted import ScriptedCast
    from tests.ui.scripted_runtime import scripted_runtime

    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    cast = ScriptedCast("akari", "hina", "souta")

    async with scripted_runtime(cast) as runtime:
        bridge = runtime.parts.bridge
        assert bridge is not None
        url = f"ws://127.0.0.1:{bridge.port}"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, origin="https://avatar.example", proxy=None):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 403
        section = runtime.settings.bridge.model_copy(
            update={"allowed_origins": [*runtime.settings.bridge.allowed_origins, "https://avatar.example"]})
        await runtime.apply_settings(runtime.settings.model_copy(update={"bridge": section}))
        assert runtime.parts.bridge is bridge  # the same bridge, on the same port: its clients stay connected
        async with connect(url, origin="https://avatar.example", proxy=None):  # type: ignore[arg-type]
            await admitted(bridge, 1)
        assert bridge.origins.refused == {"https://avatar.example": 1}


