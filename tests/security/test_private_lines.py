"""What leaves the machine: a line composed in a turn that used the camera goes to the user's own
bridge client, and to a web page or a network peer only as the user allowed that destination (asked once in the
window, remembered in the settings); otherwise it stays in this window and the others get a notice in its place. Its
streamed pieces never reach a destination before that. With no one at the window the answer is no.

Run against the real app: the assembly with the sample companions on scripted models, a generated video file as the
camera, the real bridge on loopback with real ``websockets`` clients (the user's own program, and a page on a loopback
origin), the network link on the app's bus with a recording port in place of py-libp2p (the peer is played through
the port's sink, as py-libp2p's adapter tells it), the user at the window a scripted user behind the consent port.
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from app.runtime.runtime import Runtime
from companions.conversation.readmodel import ConversationChanged
from companions.llm.scripted import ScriptedCast, call, last_message_mentions, reply_json, say
from companions.network.link import NetworkLink
from companions.testing.scripted_consent import ScriptedUser
from companions.trust.outbound import KEPT_TEXT
from companions.trust.policy import Answer, Capability
from companions.wire.protocol import CompanionMetadata
from tests.companions.network_doubles import RecordingPort
from tests.security.consenting_runtime import consenting_runtime

PAGE = "http://localhost:5173"
PEER = "12D3KooWSoutaPeerOnTheLan"
LINE = "I see you waving at me!"


@dataclass
class App:
    runtime: Runtime
    cast: ScriptedCast
    user: ScriptedUser

    @property
    def port(self) -> int:
        bridge = self.runtime.parts.bridge
        assert bridge is not None
        return bridge.port

    def own_client(self) -> connect:
        """A program of the user's on this computer (127.0.0.1, no web page)."""
        return connect(f"ws://127.0.0.1:{self.port}/?dialect=madoi", proxy=None)

    def page(self) -> connect:
        """A web page on a loopback origin (allowed by default), without the token."""
        return connect(f"ws://127.0.0.1:{self.port}/?dialect=madoi", origin=PAGE, proxy=None)  # type: ignore[arg-type]

    def akari_looks(self, line: str = LINE) -> None:
        """Akari's next turn looks through the camera and says what she saw."""
        akari = self.cast["akari"]
        akari.lane("event_params").add(
            reply_json({"already_replied": False, "need_response": True, "wants_to_see": True}))
        akari.add(call("vision", {}), say("A person at a desk, waving."),
                  call("speak", {"message": line}, expect=last_message_mentions("What you see: A person")))

    async def talk(self, text: str) -> None:
        """The user's message to Akari, until the conversation ended."""
        ended = asyncio.Event()

        def on_event(item: object) -> None:
            if isinstance(item, ConversationChanged) and item.view.status == "ended":
                ended.set()

        subscription = self.runtime.bus.subscribe("events", on_event, name="test-ended", direct=True)
        try:
            self.runtime.parts.conversations.send(text, to=["akari"])
            await asyncio.wait_for(ended.wait(), 30)
        finally:
            subscription.close()
        await self.runtime.bus.drain()


@pytest.fixture
async def app(madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[App]:
    async with consenting_runtime(monkeypatch, tmp_path) as (runtime, cast, user):
        yield App(runtime, cast, user)


async def _greet(ws: ClientConnection) -> None:
    await ws.send(json.dumps({"topic": "hello", "body": {"stream": True}}))
    while (frame := await _recv(ws))["topic"] != "hello":
        pass
    assert frame["body"]["ok"] is True, frame


async def _recv(ws: ClientConnection, timeout: float = 10.0) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return data


async def _until_akari_spoke(ws: ClientConnection) -> tuple[dict[str, Any], list[str]]:
    """Akari's ``message.send`` as the client got it, and every piece of text streamed to it before."""
    pieces: list[str] = []
    while True:
        body = (await _recv(ws))["body"]
        if body.get("method") == "message.stream":
            pieces.append(body["params"]["delta"])
        elif body.get("method") == "message.send" and body["params"]["from"] == "akari":
            return body["params"], pieces


def _saved(app: App) -> list[tuple[str, str, str]]:
    file = app.runtime.paths.settings_file
    saved = tomllib.loads(file.read_text(encoding="utf-8")) if file.exists() else {}
    return [(d["source"], d["capability"], d["decision"]) for d in saved.get("trust", {}).get("decisions", [])]


# -- the bridge: the user's own client, and a web page -----------------------------------------------------------


async def test_what_akari_saw_reaches_the_users_own_client_and_a_page_only_once_the_user_allowed_it(app: App) -> None:
    app.user.script += [Answer.NEVER]
    app.akari_looks()
    async with app.own_client() as own, app.page() as page:
        await _greet(own)
        await _greet(page)
        await app.talk("Akari, look at me.")
        mine, my_pieces = await _until_akari_spoke(own)
        theirs, their_pieces = await _until_akari_spoke(page)
    assert mine["message"] == LINE
    assert "waving" in "".join(my_pieces)  # the user's own program follows the line as it is written
    # The page: the same message id, the notice in its place, and not one piece of the line before it
    assert (theirs["id"], theirs["message"], theirs["metadata"]["kept"]) == (mine["id"], KEPT_TEXT, "private")
    assert "waving" not in "".join(their_pieces)
    [asked] = app.user.asked
    assert (asked.source.id, asked.source.place, asked.capability, asked.held_by) == (
        PAGE, "bridge", Capability.SHARE_CAMERA, "あかり")
    assert _saved(app) == [(f"{PAGE}@bridge", "share_camera", "never")]


async def test_a_page_allowed_always_gets_the_next_lines_and_their_pieces_without_a_question(app: App) -> None:
    app.user.script += [Answer.ALWAYS]
    app.akari_looks()
    app.akari_looks("Still waving, I see.")
    async with app.page() as page:
        await _greet(page)
        await app.talk("Akari, look at me.")
        first, first_pieces = await _until_akari_spoke(page)
        await app.talk("Akari, look again.")
        second, second_pieces = await _until_akari_spoke(page)
    assert first["message"] == LINE
    assert "waving" not in "".join(first_pieces)  # streamed before the user's answer: kept
    assert second["message"] == "Still waving, I see."
    assert "Still waving" in "".join(second_pieces)  # allowed already: it follows the line as it is written
    assert len(app.user.asked) == 1
    assert _saved(app) == [(f"{PAGE}@bridge", "share_camera", "always")]


async def test_with_nobody_at_the_window_a_page_gets_only_the_notice(app: App) -> None:
    app.runtime.asker.connect(None)
    app.akari_looks()
    async with app.page() as page:
        await _greet(page)
        await app.talk("Akari, look at me.")
        theirs, pieces = await _until_akari_spoke(page)
    assert theirs["message"] == KEPT_TEXT
    assert "waving" not in "".join(pieces)
    assert app.user.asked == []
    assert _saved(app) == []


# -- the network: a peer ------------------------------------------------------------------------------------------


@pytest.fixture
async def peer_link(app: App) -> AsyncIterator[tuple[NetworkLink, RecordingPort]]:
    """The network link on the app's bus, as app/network builds it (with the cast's trust policy), on a recording port;
    a peer running Souta is connected."""
    port = RecordingPort()
    runtime = app.runtime
    cast = runtime.parts.cast
    assert cast.trust_policy is runtime.parts.broker.trust  # what app/network gives the link
    link = NetworkLink(runtime.bus, port, local=lambda: [c.metadata for c in cast],
                       local_ids=lambda: cast.companions.keys(),  # noqa: PLW0108 (the cast's companions of the moment)
                       user_id=runtime.settings.general.user_name, trust=cast.trust_policy)
    await link.start()
    assert port.sink is not None
    port.sink.announced(PEER, (CompanionMetadata(id="souta_lan", name="Souta"),))
    try:
        yield link, port
    finally:
        await link.stop()


def _lines(port: RecordingPort) -> list[tuple[str, str]]:
    return [(body["params"]["from"], body["params"]["message"]) for topic, body in port.sent if topic == "messages"]


@pytest.mark.parametrize(("answer", "peer_gets"), [(Answer.NEVER, KEPT_TEXT), (Answer.ONCE, LINE)])
async def test_what_akari_saw_reaches_a_peer_only_as_the_user_answers(
        app: App, peer_link: tuple[NetworkLink, RecordingPort], answer: Answer, peer_gets: str) -> None:
    _link, port = peer_link
    app.user.script.append(answer)
    app.akari_looks()
    await app.talk("Akari, look at me.")
    await port.wait_sent("messages", 2)
    assert _lines(port) == [("user", "Akari, look at me."), ("akari", peer_gets)]
    [asked] = app.user.asked
    assert (asked.source.key, asked.source.name, asked.capability, asked.held_by) == (
        f"peer@network:{PEER}", "Souta", Capability.SHARE_CAMERA, "あかり")


async def test_a_line_of_no_look_goes_to_the_peer_without_a_question(
        app: App, peer_link: tuple[NetworkLink, RecordingPort]) -> None:
    _link, port = peer_link
    app.cast["akari"].lane("event_params").add(
        reply_json({"already_replied": False, "need_response": True, "wants_to_see": False}))
    app.cast["akari"].add(call("speak", {"message": "Hello there!"}))
    await app.talk("Hi Akari.")
    await port.wait_sent("messages", 2)
    assert _lines(port) == [("user", "Hi Akari."), ("akari", "Hello there!")]
    assert app.user.asked == []
