"""Local LLM detection never picks the bridge: a real WebSocket server where llama.cpp would be (port 8080 style)."""

from __future__ import annotations

from websockets.asyncio.server import ServerConnection, serve

from app.bridge.server import BridgeServer
from app.llm.connection_check import check_connection
from companions.llm.detect import Candidate, DetectedServer, NoServer, detect_local_server
from companions.testing.openai_server import OpenAITestServer
from companions.wire.bus import InProcessBus
from companions.wire.query_broker import QueryBroker


async def _echo(connection: ServerConnection) -> None:
    async for message in connection:
        await connection.send(message)


async def test_a_websocket_server_is_not_a_model_server() -> None:
    async with serve(_echo, "127.0.0.1", 0) as bridge, OpenAITestServer(models=["llama3.2"]) as real:
        bridge_url = f"http://127.0.0.1:{bridge.sockets[0].getsockname()[1]}/v1"
        alone = await detect_local_server([Candidate("llama.cpp", bridge_url)])
        both = await detect_local_server([Candidate("llama.cpp", bridge_url), Candidate("LM Studio", real.base_url)])
    assert isinstance(alone, NoServer)
    assert isinstance(both, DetectedServer)
    assert both.kind == "LM Studio"


async def test_madois_own_bridge_is_never_taken_for_a_model_server() -> None:
    """The real bridge where a model server would be: detection passes over it and the settings' connection test
    says what it is, instead of an HTTP status."""
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    bridge = BridgeServer(bus, broker, port=0)
    await bridge.start()
    try:
        url = f"http://127.0.0.1:{bridge.port}/v1"
        found = await detect_local_server([Candidate("llama.cpp", url)])
        checked = await check_connection(url, None, timeout_s=2)
    finally:
        await bridge.stop()
        await broker.aclose()
    assert isinstance(found, NoServer)
    assert not checked.ok
    assert checked.error is not None
    assert "WebSocket" in checked.error
    assert "426" not in checked.error
