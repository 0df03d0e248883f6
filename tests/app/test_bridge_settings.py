"""The bridge's settings: the default dialect for clients that do not say, and the clients' grace."""

from __future__ import annotations

import asyncio
import socket

from app.bridge import build_bridge
from app.settings import Settings
from companions.bus import InProcessBus
from companions.query_broker import QueryBroker
from tests.app.kyoko_clients import LegacyKyokoClient, running
from tests.app.test_bridge_dialects import COMPANIONS, App


async def test_the_settings_choose_the_default_dialect_and_the_clients_grace() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
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
            await app.bridge.wait_for_clients(1)
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
    from app.settings import env_overrides

    overrides = env_overrides({"MADOI_BRIDGE_DIALECT": "legacy", "MADOI_BRIDGE_CLIENT_ANSWERS": "vision, speak"})
    bridge = Settings.model_validate(overrides).bridge
    assert (bridge.dialect, bridge.client_answers) == ("legacy", ["vision", "speak"])
    assert Settings().bridge.dialect == "reference"  # the reference firehose's, by default
