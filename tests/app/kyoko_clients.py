"""Clients written for the reference framework, in Python, frame for frame as they are written in TypeScript.

* :class:`FirehoseExampleClient`: the client example of aikyo's firehose documentation (docs/api/firehose.md):
  sends ``{"topic": "messages", "body": <message.send>}`` as ``user_yamada`` and logs every frame it parses.
* :class:`KyokoClient`: kyoko's companion-kit on the JSON-RPC wire (events/VisionEventHandler.ts and
  SpeakEventHandler.ts at 26dabe6): it acts only on bare JSON-RPC queries whose ``params.from`` is its companion;
  a ``vision`` query is answered ``{image: <base64>}`` and a ``speak`` query is said, then answered, in the
  firehose's ``{"topic": "queries", "body": <result>}``; ``message.send`` of its companion is shown.
* :class:`LegacyKyokoClient`: kyoko's companion-kit before JSON-RPC (CompanionEngine.handleWebSocketEvent and the
  Message/Vision/Gesture handlers at 0f2a918 / 43980b4, the wire of aikyo-network.md): it acts only on flat
  events whose ``from`` is its companion: ``message`` -> said aloud with ``metadata.emotion``; ``type: "vision"``
  -> ``{"topic": "query-results", "body": {"id", "success": true, "body": "data:image/png;base64,..."}}``;
  ``name: "gesture"`` with ``params.url`` -> played. It sends what the user says as
  ``{"topic": "messages", "body": {"id", "from": "user_<name>", "to": [companionId], "message"}}`` (or, as its
  later CompanionEngine did, the flat body alone).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n a frame from the client's webcam").decode()


@dataclass
class _Base:
    ws: ClientConnection
    frames: list[Any] = field(default_factory=list)  # every frame, as JSON.parse gives it
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        async for raw in self.ws:
            data = json.loads(raw)
            self.frames.append(data)
            await self.handle(data)
            self.arrived.set()

    async def handle(self, data: Any) -> None:
        pass

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()


@dataclass
class FirehoseExampleClient(_Base):
    user_id: str = "user_yamada"

    async def say(self, message: str, to: str) -> str:
        message_id = str(uuid.uuid4())
        frame = {"topic": "messages", "body": {"jsonrpc": "2.0", "method": "message.send", "params": {
            "id": message_id, "from": self.user_id, "to": [to], "message": message}}}
        await self.ws.send(json.dumps(frame))
        return message_id

    def methods(self) -> list[str | None]:
        return [f.get("method") if isinstance(f, dict) else None for f in self.frames]


@dataclass
class KyokoClient(_Base):
    companion_id: str = "akari"
    seen: list[str] = field(default_factory=list)  # what the user saw and heard of its companion
    captures: int = 0
    picture: str = PNG  # what its webcam gives, as base64

    async def handle(self, data: Any) -> None:
        if not isinstance(data, dict) or data.get("method") not in ("query.send", "message.send"):
            return
        params = data.get("params") or {}
        if params.get("from") != self.companion_id:
            return
        if data["method"] == "message.send":
            self.seen.append(f"shown: {params['message']}")
        elif params.get("type") == "vision":
            self.captures += 1
            await self._return_query(data["id"], {"image": self.picture})
        elif params.get("type") == "speak":
            body = params.get("body") or {}
            self.seen.append(f"said ({body.get('emotion', 'neutral')}): {body.get('message')}")
            await self._return_query(data["id"], {})

    async def _return_query(self, query_id: str, body: dict[str, Any]) -> None:
        result = {"jsonrpc": "2.0", "id": query_id, "result": {"success": True, "body": body}}
        await self.ws.send(json.dumps({"topic": "queries", "body": result}))


@dataclass
class LegacyKyokoClient(_Base):
    companion_id: str = "akari"
    user_name: str = "taro"
    said: list[tuple[str, str]] = field(default_factory=list)  # (emotion, line) it said aloud with its own TTS
    gestures: list[str] = field(default_factory=list)
    captures: int = 0
    picture: str = PNG

    async def handle(self, event: Any) -> None:
        if not isinstance(event, dict) or event.get("from") != self.companion_id:
            return
        if isinstance(event.get("message"), str) and event["message"]:
            self.said.append(((event.get("metadata") or {}).get("emotion", "neutral"), event["message"]))
        if event.get("type") == "vision" and event.get("id"):
            self.captures += 1
            answer = {"id": event["id"], "success": True, "body": f"data:image/png;base64,{self.picture}"}
            await self.ws.send(json.dumps({"topic": "query-results", "body": answer}))
        if event.get("name") == "gesture" and isinstance((event.get("params") or {}).get("url"), str):
            self.gestures.append(event["params"]["url"])

    async def speak_to_companion(self, transcript: str, *, wrapped: bool = True) -> str:
        message_id = str(uuid.uuid4())
        body = {"id": message_id, "from": f"user_{self.user_name}", "to": [self.companion_id],
                "message": transcript}
        await self.ws.send(json.dumps({"topic": "messages", "body": body} if wrapped else body))
        return message_id


@contextlib.asynccontextmanager
async def running(client_type: type[_Base], url: str, **fields: Any) -> AsyncIterator[Any]:
    """Connects ``client_type`` to ``url`` and runs its receive loop for the block."""
    async with connect(url, proxy=None) as ws:
        client = client_type(ws, **fields)
        loop = asyncio.get_running_loop().create_task(client.run())
        try:
            yield client
        finally:
            loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loop
