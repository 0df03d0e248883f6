"""A companion that joins through the bridge talks with the app's own companions (the sample cards on scripted chat
models, the real assembly): named by the user, it answers; the others hear it, know it is present, and answer it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from companions.companion.guests import BridgeGuestsChanged
from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import ScriptedCast, reply_json, say
from companions.wire.protocol import Message, to_wire
from tests.conftest import free_port
from tests.ui.scripted_runtime import scripted_cast, scripted_runtime

KUMO = {"id": "kumo", "name": "Kumo", "personality": "calm, likes clouds", "story": "lives on a hill",
        "sample": "Clouds are slow."}


async def frame(ws: ClientConnection, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while True:
            data: dict[str, Any] = json.loads(await ws.recv())
            if wanted(data):
                return data


async def test_a_bridge_companion_named_by_the_user_answers_and_the_local_companions_answer_it(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))  # the tests' default (0) turns the bridge off
    cast = scripted_cast()
    # Kumo's line to everyone: Akari wants to answer it, Hina and Souta listen; then nobody answers Akari (Kumo
    # does not vote: a missing vote by the deadline).
    cast["akari"].lane("vote").add(reply_json({"state": "speak", "importance": 8, "reason": "clouds!"}))
    cast["akari"].lane("chat").add(say("Kumo, you are funny! To me they taste of rain."))
    for other in ("hina", "souta"):
        cast[other].lane("vote").add(reply_json({"state": "listen", "importance": 1, "reason": ""}),
                                     reply_json({"state": "listen", "importance": 0, "reason": ""}))

    async with scripted_runtime(cast) as runtime:
        bridge = runtime.parts.bridge
        assert bridge is not None
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        async with connect(f"ws://127.0.0.1:{bridge.port}", proxy=None) as ws:
            await ws.send(json.dumps({"topic": "metadata", "body": KUMO}))
            assert (await frame(ws, lambda d: d.get("topic") == "metadata"))["body"]["ok"]
            assert "kumo" in runtime.parts.conversation_manager.present
            assert [m.id for m in runtime.parts.cast.roster()][-1] == "kumo"  # the companions know it is here

            runtime.parts.conversations.send("Kumo, what do clouds taste like?")
            turn = await frame(ws, lambda d: d.get("topic") == "turns" and d["body"]["params"]["phase"] == "composing")
            assert turn["body"]["params"]["speaker"] == "kumo"  # named: it holds the floor without a vote
            line = Message.create(from_="kumo", message="Like cold cotton, I think.", to=[])
            await ws.send(json.dumps({"topic": "messages", "body": to_wire(line)}))

            answer = await frame(ws, lambda d: d.get("method") == "message.send" and d["params"]["from"] == "akari")
            assert answer["params"]["message"] == "Kumo, you are funny! To me they taste of rain."
            view = await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        assert [t.speaker for t in talk.turns()] == ["kumo", "akari", None]
        assert view.ended_reason == "no-speaker"
        # Akari voted on Kumo's line, knowing Kumo is present.
        vote_request = cast["akari"].requests_in("vote")[0]
        prompt = "\n".join(str(m.content) for m in vote_request.messages)
        assert "Like cold cotton, I think." in prompt
        assert "Kumo" in prompt
        cast.assert_used_up()


async def test_a_guest_of_a_bridge_that_moved_twice_is_present_once_and_leaves_when_it_disconnects(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    cast = ScriptedCast("akari", "hina", "souta")
    async with scripted_runtime(cast) as runtime:
        for _ in range(2):  # the user saves another port twice
            section = runtime.settings.bridge.model_copy(update={"port": free_port()})
            await runtime.apply_settings(runtime.settings.model_copy(update={"bridge": section}))
        bridge = runtime.parts.bridge
        assert bridge is not None
        listed: asyncio.Queue[BridgeGuestsChanged] = asyncio.Queue()
        runtime.bus.subscribe("events", lambda e: listed.put_nowait(e) if isinstance(e, BridgeGuestsChanged) else None,
                              direct=True)
        async with connect(f"ws://127.0.0.1:{bridge.port}", proxy=None) as ws:
            await ws.send(json.dumps({"topic": "metadata", "body": KUMO}))
            assert (await frame(ws, lambda d: d.get("topic") == "metadata"))["body"]["ok"]
            assert [m.id for m in runtime.parts.cast.roster()].count("kumo") == 1
            assert runtime.parts.cast.name_of("kumo") == "Kumo"
        async with asyncio.timeout(5):
            while (await listed.get()).guests:  # disconnected: Kumo left
                pass
        assert "kumo" not in [m.id for m in runtime.parts.cast.roster()]
