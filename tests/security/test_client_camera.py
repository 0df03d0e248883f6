"""A client's own camera is its user's; this computer's camera stays this computer's user's.

kyoko, the reference framework's VRM avatar client, is a web page (http://localhost:3000) that answers its
companion's ``vision`` queries with its own webcam. Registered as Akari's vision answerer (the Bridge tab's "clients
answer" set to vision, its URL naming its companion), its user talks to Akari as ``user_<name>``. Akari's look in
that turn is through kyoko's camera: nobody is asked, even headless, and her line reaches kyoko. The app's own camera
answers nobody in that turn, and a look asked by anyone else is still put to the user (headless: refused).

Real parts: the app (the assembly with the sample companions on scripted models that do what they are told, a
generated video file as this computer's camera), its bridge on loopback, and kyoko's frames as
tests/app/kyoko_clients.py speaks them (its JSON-RPC companion-kit).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.cards.card import CompanionCard
from companions.devices.ports import CameraLooked
from companions.llm.scripted import ScriptedCast, ScriptedModel, call, last_message_mentions, reply_json, say
from companions.tools.tool_use import ToolUsed
from companions.wire.protocol import Message, frame_of
from tests.app.kyoko_clients import KyokoClient
from tests.app.media import write_test_video
from tests.conftest import free_port
from tests.waiting import wait_until

KYOKO_PAGE = "http://localhost:3000"  # kyoko is a Next.js page served from this computer


@dataclass
class App:
    runtime: Runtime
    cast: ScriptedCast
    events: list[object]

    @property
    def url(self) -> str:
        bridge = self.runtime.parts.bridge
        assert bridge is not None
        return f"ws://127.0.0.1:{bridge.port}/"

    def looks(self) -> list[CameraLooked]:
        return [e for e in self.events if isinstance(e, CameraLooked)]

    def refused_tools(self) -> list[ToolUsed]:
        return [e for e in self.events if isinstance(e, ToolUsed) and e.refused]


@pytest.fixture
async def app(madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[App]:
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    monkeypatch.setenv("MADOI_BRIDGE_CLIENT_ANSWERS", "vision")  # the reference's clients answer vision first
    monkeypatch.setenv("MADOI_CAMERA", str(write_test_video(tmp_path / "webcam.avi", frames=30, face=True)))
    cast = ScriptedCast("akari", "hina", "souta")
    for model in cast.values():
        model.lane("vote").always(reply_json({"state": "listen", "importance": 0, "reason": ""}))

    def make_model(card: CompanionCard) -> ScriptedModel:
        return cast[card.id]

    runtime = Runtime(load_settings(), make_model=make_model)
    await runtime.start()
    runtime.asker.connect(None)  # headless: nobody at a window to ask
    events: list[object] = []
    runtime.bus.subscribe("events", events.append, name="client-camera-events")
    try:
        yield App(runtime, cast, events)
    finally:
        await runtime.stop()
    cast.assert_used_up()


@contextlib.asynccontextmanager
async def kyoko_page(app: App, companion: str = "akari") -> AsyncIterator[KyokoClient]:
    """kyoko in a browser: a page from its origin, standing for ``companion`` (the URL names it)."""
    async with connect(f"{app.url}?companion={companion}", origin=KYOKO_PAGE, proxy=None) as ws:  # type: ignore[arg-type]
        client = KyokoClient(ws, companion_id=companion)
        loop = asyncio.get_running_loop().create_task(client.run())
        try:
            yield client
        finally:
            loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loop


async def _says(ws: ClientConnection, sender: str, text: str, to: str = "akari") -> None:
    """A user's words as the reference's clients send them (the firehose's envelope, a JSON-RPC message.send)."""
    await ws.send(frame_of(Message.create(from_=sender, message=text, to=[to])))


def _akari_looks(app: App, line: str, expect: str, *, described: bool) -> None:
    akari = app.cast["akari"]
    akari.lane("event_params").add(
        reply_json({"already_replied": False, "need_response": True, "wants_to_see": True}))
    steps: list[Any] = [call("vision", {})]
    if described:  # her model takes pictures: it is asked to describe the one it got
        steps.append(say("A person waving at a webcam."))
    akari.add(*steps, call("speak", {"message": line}, expect=last_message_mentions(expect)))


async def test_kyokos_user_asks_akari_to_look_and_she_looks_through_kyokos_camera_without_a_question(
        app: App) -> None:
    _akari_looks(app, "I see you waving!", "What you see: A person waving", described=True)
    async with kyoko_page(app) as kyoko:
        await wait_until(app.runtime.parts.broker.externals, "kyoko registered as a vision answerer")
        await _says(kyoko.ws, "user_taro", "Akari, can you see me?")
        await kyoko.wait_for(lambda: "shown: I see you waving!" in kyoko.seen, timeout=30)
    await app.runtime.bus.drain()
    assert kyoko.captures == 1  # kyoko's own webcam answered
    assert app.looks() == []  # this computer's camera never looked
    assert app.refused_tools() == []


async def test_this_computers_camera_stays_gated_while_kyoko_answers_for_akari(app: App) -> None:
    """Another page's user asks Akari to look while kyoko stands for her: that is not kyoko's user, so the look is
    put to the user as ever; headless, refused. Neither camera is used."""
    akari = app.cast["akari"]
    akari.lane("event_params").add(
        reply_json({"already_replied": False, "need_response": True, "wants_to_see": True}))
    akari.add(call("vision", {}), call("speak", {"message": "I may not look."},
                                       expect=last_message_mentions("may not look through your camera")))
    async with kyoko_page(app) as kyoko, connect(f"{app.url}?dialect=madoi", origin="http://localhost:5173",
                                                 proxy=None) as other:  # type: ignore[arg-type]
        await wait_until(app.runtime.parts.broker.externals, "kyoko registered as a vision answerer")
        await _says(other, "user_evil", "Akari, look through the camera.")
        await kyoko.wait_for(lambda: "shown: I may not look." in kyoko.seen, timeout=30)
    await app.runtime.bus.drain()
    assert kyoko.captures == 0
    assert app.looks() == []
    [refused] = app.refused_tools()
    assert refused.result == ("Not allowed: user_evil may not look through your camera "
                              "(nobody is at the window to ask).")
