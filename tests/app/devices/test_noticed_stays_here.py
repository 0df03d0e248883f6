"""What noticing saw carries the camera's frame (for this window's chat), and so it never leaves this process: the
bridge sends it to no client (not even one that follows the ``events`` topic's streamed text and turns), and the
network link sends it to no peer. Each side gets a message published right after it, and that message is the first
and only thing it sends."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import cv2
import numpy as np
import pytest

from app.bridge import BridgeServer
from app.devices.camera import encode_jpeg
from companions.devices.presence import PresenceNoticed
from companions.network.link import NetworkLink
from companions.wire.bus import InProcessBus
from companions.wire.protocol import CompanionMetadata, Message, parse_frame
from tests.app.bridge_app import serving_bridge
from tests.app.bridge_client import admitted, client, hello, recv
from tests.companions.network_doubles import RecordingPort


def _noticed() -> PresenceNoticed:
    image = np.full((480, 640, 3), 128, dtype=np.uint8)
    cv2.circle(image, (470, 250), 90, (150, 180, 225), thickness=-1)
    return PresenceNoticed("arrived", 1_700_000_000.0, 1, 0.0, encode_jpeg(image), 640, 480)


@pytest.fixture
async def bridge() -> AsyncIterator[tuple[InProcessBus, BridgeServer]]:
    async with serving_bridge() as serving:
        yield serving


async def test_no_bridge_client_gets_what_was_noticed(bridge: tuple[InProcessBus, BridgeServer]) -> None:
    bus, server = bridge
    async with client(server) as follower, client(server, dialect=None) as reference:
        welcome = await hello(follower, stream=True, turns=True)  # follows the events topic's streams and turns
        assert welcome["body"]["stream"] is True
        await admitted(server, 2)
        noticed = _noticed()
        bus.publish(noticed)
        said = Message.create(from_="user", message="hello")
        bus.publish(said)
        assert parse_frame(json.dumps(await recv(follower))) == ("messages", said)  # the first frame after hello
        assert (await recv(reference))["params"]["id"] == said.params.id  # (the reference dialect: bare bodies)


async def test_no_peer_on_the_network_gets_what_was_noticed() -> None:
    bus = InProcessBus()
    port = RecordingPort()
    link = NetworkLink(bus, port, local=[CompanionMetadata(id="akari", name="akari")], user_id="user")
    await link.start()
    try:
        bus.publish(_noticed())
        said = Message.create(from_="user", message="hello", to=["akari"])
        bus.publish(said)
        await port.wait_sent("messages")
        assert [(topic, body["params"]["id"]) for topic, body in port.sent] == [("messages", said.params.id)]
    finally:
        await link.stop()
        await bus.aclose()
