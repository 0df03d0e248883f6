"""build_devices: the camera and speaker a runtime gets for its settings, working together over the broker."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.devices.wiring import build_devices
from app.settings.model import Settings
from companions.devices.ports import DeviceStatus
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Query
from companions.wire.query_broker import QueryBroker
from tests.app.media import write_test_video


async def test_devices_answer_vision_and_speak_queries_and_follow_settings(tmp_path: Path) -> None:
    video = write_test_video(tmp_path / "cam.avi", frames=10)
    settings = Settings.model_validate({"camera": {"source": "none"}})
    bus = InProcessBus()
    statuses: list[DeviceStatus] = []
    bus.subscribe("events", lambda e: statuses.append(e) if isinstance(e, DeviceStatus) else None)
    broker = QueryBroker(bus)
    devices = build_devices(settings, bus, speech_dir=tmp_path / "speech")
    for responder in devices.responders:
        broker.register(responder)
    for component in devices.components:
        await component.start()
    try:
        off = await broker.send_query(Query.create(from_="alice", type="vision"), timeout=5)
        assert off.error == "no camera: turned off in the settings"
        spoken = await broker.send_query(
            Query.create(from_="alice", type="speak", body={"message": "こんにちは", "emotion": "happy"}), timeout=10)
        assert spoken.succeeded
        assert spoken.result is not None
        assert spoken.result.body["duration"] > 0.2

        settings.camera.source = str(video)
        await devices.apply_settings(settings)
        seen = await broker.send_query(Query.create(from_="alice", type="vision"), timeout=5)
        assert seen.succeeded
        assert seen.result is not None
        assert seen.result.body["width"] == 640
        await asyncio.wait_for(bus.drain(), 5)
        camera_states = [(s.available, s.reason) for s in statuses if s.device == "camera"]
        assert camera_states[0] == (False, "no camera: turned off in the settings")
        assert camera_states[-1] == (True, "")
    finally:
        for component in reversed(devices.components):
            await component.stop()
        await broker.aclose()
        await bus.aclose()
