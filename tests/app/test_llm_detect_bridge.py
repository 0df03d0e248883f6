"""Local LLM detection never picks the bridge: a real WebSocket server where llama.cpp would be (port 8080 style)."""

from __future__ import annotations

from websockets.asyncio.server import ServerConnection, serve

from companions.llm.detect import Candidate, DetectedServer, NoServer, detect_local_server
from companions.testing.openai_server import OpenAITestServer


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
