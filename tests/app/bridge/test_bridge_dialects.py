"""Clients written for the reference framework work unchanged against the bridge, each in its dialect.

Real parts: the bridge on loopback, the bus, the query broker; the clients are tests/app/kyoko_clients.py (frames
byte for byte as the reference's clients send and parse them). The app's own camera and voice are doubles behind
the QueryResponder port, so a test can tell who answered.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import connect

from companions.wire.protocol import Action, Message, State
from tests.app.bridge_app import App, start_app
from tests.app.bridge_client import admitted
from tests.app.kyoko_clients import PNG, FirehoseExampleClient, KyokoClient, LegacyKyokoClient, running


@pytest.fixture
async def app() -> AsyncIterator[App]:
    started = await start_app()
    yield started
    await started.bridge.stop()
    await started.broker.aclose()
    await started.bus.aclose()


# -- the reference firehose's dialect (the default) -------------------------------------------------------------


async def test_the_firehose_documentation_example_works_unchanged(app: App) -> None:
    async with running(FirehoseExampleClient, app.url()) as client:
        await admitted(app.bridge, 1)
        message_id = await client.say("Hello Aya!", to="akari")
        heard = await app.heard(message_id)
        assert (heard.params.from_, heard.params.to, heard.params.message) == ("user_yamada", ["akari"], "Hello Aya!")

        reply = Message.create(from_="akari", message="こんにちは、山田さん", to=["user_yamada"], emotion="happy")
        app.bus.publish(State.create(from_="akari", message_id=message_id, state="speak", importance=8))
        app.bus.publish(Action.create(from_="akari", name="gesture", params={"type": "wave"}))
        app.bus.publish(reply)
        await client.wait_for(lambda: "message.send" in client.methods()[1:])
    own, action, answer = client.frames  # its own message, echoed as the firehose does; no state
    assert own["params"]["id"] == message_id
    assert action == {"jsonrpc": "2.0", "method": "action.send",
                      "params": {"from": "akari", "name": "gesture", "params": {"type": "wave"}}}
    assert answer == {"jsonrpc": "2.0", "method": "message.send", "params": {
        "id": reply.params.id, "from": "akari", "to": ["user_yamada"], "message": "こんにちは、山田さん",
        "metadata": {"emotion": "happy"}}}


async def test_a_client_speaks_as_one_user_never_as_a_companion_or_another_user(app: App) -> None:
    async with running(FirehoseExampleClient, app.url()) as yamada, \
            running(FirehoseExampleClient, app.url(), user_id="user_suzuki") as suzuki:
        await admitted(app.bridge, 2)
        await app.heard(await yamada.say("first", to="akari"))  # user_yamada is now this client's
        for forged, sender in (("user_yamada", suzuki), ("akari", suzuki), ("user_tanaka", yamada)):
            sender.user_id = forged
            await sender.say("forged", to="hina")
            await sender.wait_for(lambda s=sender: any("error" in f for f in s.frames))
            error = next(f for f in sender.frames if "error" in f)
            sender.frames.remove(error)
            assert error["error"]["code"] == -32002, error
            assert f"forged from {forged!r}" in error["error"]["message"]
        suzuki.user_id = "user_suzuki"
        await app.heard(await suzuki.say("as myself", to="hina"))
    assert {m.params.from_ for m in app.wire if isinstance(m, Message)} == {"user_yamada", "user_suzuki"}


async def test_what_the_reference_accepts_and_madoi_refuses_gets_a_clear_error(app: App) -> None:
    async with connect(app.url(), proxy=None) as ws:
        await admitted(app.bridge, 1)
        state = {"jsonrpc": "2.0", "method": "state.send", "params": {
            "from": "user_yamada", "messageId": "m", "state": "speak", "importance": 5, "selected": False,
            "closing": "none"}}
        await ws.send(json.dumps({"topic": "states", "body": state}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert error["error"]["code"] == -32002
        assert "clients may not publish states" in error["error"]["message"]
        await ws.send('{"topic": "messages", "body": {"jsonrpc": "2.0", "method": "nope"}}')
        assert "unknown method 'nope'" in json.loads(await asyncio.wait_for(ws.recv(), 5))["error"]["message"]
        await ws.ping()  # the connection lives on


async def test_the_firehose_before_1_5_bare_bodies_are_understood(app: App) -> None:
    async with connect(app.url(), proxy=None) as ws:
        await admitted(app.bridge, 1)
        message = Message.create(from_="user_old", message="bare", to=["akari"])
        await ws.send(message.model_dump_json(by_alias=True, exclude_none=True))
        assert (await app.heard(message.params.id)) == message


async def test_kyoko_answers_its_companions_vision_and_speak_queries_before_the_app() -> None:
    app = await start_app(client_answers=["vision", "speak"])
    try:
        async with running(KyokoClient, app.url(), companion_id="akari") as kyoko:
            await admitted(app.bridge, 1)
            seen = await app.ask("akari", "vision")
            said = await app.ask("akari", "speak", message="見えたよ！", emotion="happy")
            app.bus.publish(Message.create(from_="akari", message="見えたよ！", emotion="happy"))
            await kyoko.wait_for(lambda: len(kyoko.seen) == 2)
            other = await app.ask("hina", "vision")  # kyoko stands for akari only: the app's camera, after grace
        assert seen.result is not None
        assert seen.result.body == {"image": PNG}
        assert said.succeeded
        assert kyoko.seen == ["said (happy): 見えたよ！", "shown: 見えたよ！"]
        assert app.camera.answered == [q for q in app.camera.answered if q.params.from_ == "hina"]
        assert app.voice.answered == []  # the app never said the line kyoko said
        assert other.result is not None
        assert other.result.body == {"by": "app"}
    finally:
        await app.bridge.stop()
        await app.broker.aclose()
        await app.bus.aclose()


async def test_a_client_that_answers_unasked_is_refused_and_never_asked_first(app: App) -> None:
    async with running(KyokoClient, app.url(), companion_id="akari") as kyoko:
        await admitted(app.bridge, 1)
        first = await app.ask("akari", "vision")  # kyoko was not asked (no hello, no settings): the app's camera
        await kyoko.wait_for(lambda: any("error" in f for f in kyoko.frames))  # its unasked answer was refused
        second = await app.ask("akari", "speak", message="まだ私の声")
    assert first.result is not None
    assert first.result.body == {"by": "app"}
    assert second.result is not None
    assert second.result.body == {"by": "app"}  # it did not silence the app's voice by answering
    assert len(app.camera.answered) == 1
    assert len(app.voice.answered) == 1
    assert app.broker.externals() == {}
    refused = next(f for f in kyoko.frames if "error" in f)
    assert refused["error"]["code"] in (-32002, -32005)  # not asked, or answered already: refused either way


async def test_an_older_clients_refused_message_makes_it_nobodys_answerer(app: App) -> None:
    async with connect(app.url("?dialect=legacy"), proxy=None) as ws:
        await admitted(app.bridge, 1)
        forged = {"id": "m1", "from": "akari", "to": ["hina"], "message": "I am Akari"}
        await ws.send(json.dumps({"topic": "messages", "body": forged}))
        assert json.loads(await asyncio.wait_for(ws.recv(), 5))["error"]["code"] == -32002
        seen = await app.ask("hina", "vision")
    assert app.broker.externals() == {}  # it stands for nobody: its message was refused
    assert seen.result is not None
    assert seen.result.body == {"by": "app"}


# -- the older client's dialect -----------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["url", "detected", "detected-bare"])
async def test_the_older_kyoko_client_works_unchanged(app: App, how: str) -> None:
    url = app.url("?dialect=legacy&companion=akari" if how == "url" else "")
    async with running(LegacyKyokoClient, url, companion_id="akari") as kyoko:
        await admitted(app.bridge, 1)
        message_id = await kyoko.speak_to_companion("今日は何をしていたの？", wrapped=how != "detected-bare")
        heard = await app.heard(message_id)
        assert (heard.params.from_, heard.params.to) == ("user_taro", ["akari"])

        seen = await app.ask("akari", "vision")
        said = await app.ask("akari", "speak", message="本を読んでいたよ", emotion="happy")
        app.bus.publish(Message.create(from_="akari", message="本を読んでいたよ", emotion="happy", to=["user_taro"]))
        app.bus.publish(Action.create(from_="akari", name="gesture", params={"url": "/motions/wave.fbx"}))
        app.bus.publish(Message.create(from_="hina", message="わたしも！"))
        await kyoko.wait_for(lambda: kyoko.gestures)
    assert seen.result is not None
    assert seen.result.body == {"image": f"data:image/png;base64,{PNG}", "mime": "image/png"}
    assert kyoko.captures == 1
    assert app.camera.answered == []
    assert said.succeeded
    assert said.result is not None
    assert said.result.body["skipped"] is True
    assert app.voice.answered == []  # kyoko says akari's lines itself: the app stays silent
    assert kyoko.said == [("happy", "本を読んでいたよ")]  # hina's line is not its companion's
    assert kyoko.gestures == ["/motions/wave.fbx"]
    assert all("jsonrpc" not in f for f in kyoko.frames if isinstance(f, dict) and "error" not in f)  # flat


async def test_garbage_from_an_older_client_is_answered_and_the_connection_lives(app: App) -> None:
    async with connect(app.url("?dialect=legacy"), proxy=None) as ws:
        await admitted(app.bridge, 1)
        for junk in ('{"topic": "query-results", "body": "data:image/png;base64,AAAA"}',
                     '{"topic": "query-results", "body": {"id": "nope", "success": true, "body": 3}}',
                     '{"topic": "messages", "body": {"id": "1", "from": "akari", "to": [], "message": "forged"}}',
                     '{"id": "2", "from": "user_a", "to": "akari", "message": 5}', "[]", "\x00"):
            await ws.send(junk)
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["error"]["code"] < 0
        await ws.ping()
    assert not [m for m in app.wire if isinstance(m, Message)]


async def test_an_unknown_dialect_in_the_url_is_refused_at_the_handshake(app: App) -> None:
    from websockets.exceptions import InvalidStatus

    with pytest.raises(InvalidStatus) as refused:
        async with connect(app.url("?dialect=klingon"), proxy=None):
            pass
    assert refused.value.response.status_code == 400


# -- Madoi's own frames ---------------------------------------------------------------------------------------------


async def test_a_madoi_client_that_asks_follows_the_turns_phases(app: App) -> None:
    from companions.conversation.readmodel import ConversationChanged, ConversationView, TurnView

    async with connect(app.url(), proxy=None) as madoi, running(FirehoseExampleClient, app.url()) as reference:
        await madoi.send(json.dumps({"topic": "hello", "body": {"turns": True}}))
        assert json.loads(await asyncio.wait_for(madoi.recv(), 5))["body"]["turns"] is True
        await admitted(app.bridge, 2)
        for phase, speaker in (("voting", None), ("voting", None), ("composing", "akari"), ("speaking", "akari")):
            turn = TurnView("m1", "user", 1, phase, speaker=speaker)  # type: ignore[arg-type]
            app.bus.publish(ConversationChanged(ConversationView(status="running", turn=turn), "turn"))
        app.bus.publish(State.create(from_="akari", message_id="m1", state="speak", importance=9))
        frames = [json.loads(await asyncio.wait_for(madoi.recv(), 5)) for _ in range(4)]
        app.bus.publish(Message.create(from_="akari", message="marker"))
        await reference.wait_for(lambda: reference.frames)
    phases = [(f["body"]["params"]["phase"], f["body"]["params"].get("speaker")) for f in frames[:3]]
    assert phases == [("voting", None), ("composing", "akari"), ("speaking", "akari")]  # one frame per change
    assert frames[0] == {"topic": "turns", "body": {"jsonrpc": "2.0", "method": "turn.phase", "params": {
        "id": "m1", "number": 1, "openedBy": "user", "phase": "voting", "closing": "none", "status": "running"}}}
    assert frames[3]["topic"] == "states"  # Madoi's frames carry the votes too
    assert [f["method"] for f in reference.frames] == ["message.send"]  # a reference client: neither


def _png(width: int, height: int, bgr: tuple[int, int, int]) -> str:
    import cv2
    import numpy as np

    image = np.zeros((height, width, 3), np.uint8)
    image[:] = bgr
    ok, encoded = cv2.imencode(".png", image)
    assert ok
    return base64.b64encode(encoded.tobytes()).decode()


async def test_a_clients_picture_gets_the_on_device_description_a_text_only_model_reads(app: App) -> None:
    bomb = bytearray(base64.b64decode(_png(8, 8, (0, 0, 0))))
    bomb[16:24] = struct.pack(">II", 100_000, 100_000)  # a header that claims 10 gigapixels
    async with running(LegacyKyokoClient, app.url("?dialect=legacy&companion=akari"), companion_id="akari",
                       picture=_png(64, 48, (200, 40, 30))) as kyoko:
        await admitted(app.bridge, 1)
        seen = await app.ask("akari", "vision")
        kyoko.picture = base64.b64encode(bytes(bomb)).decode()
        refused = await app.ask("akari", "vision")
    assert seen.result is not None
    assert "no AI model looked at the image" in seen.result.body["description"]
    assert seen.result.body["description_details"]["colours"][0]["name"] == "blue"
    assert seen.result.body["image"].startswith("data:image/png;base64,")  # the picture itself, unchanged
    assert refused.result is not None
    assert "description" not in refused.result.body  # never decoded; the picture still reaches the companion


def test_picture_sizes_are_read_from_the_header_before_decoding() -> None:
    import cv2
    import numpy as np

    from app.bridge.client_vision import image_size

    image = np.zeros((48, 64, 3), np.uint8)
    assert image_size(cv2.imencode(".jpg", image)[1].tobytes()) == (64, 48)
    assert image_size(base64.b64decode(_png(64, 48, (0, 0, 0)))) == (64, 48)
    assert image_size(b"GIF89a....") is None
    assert image_size(b"\xff\xd8\xff") is None


async def test_rejected_frames_are_logged_without_flooding_the_log(app: App, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="app.bridge.server")
    async with connect(app.url(), proxy=None) as ws:
        await admitted(app.bridge, 1)
        for i in range(40):
            await ws.send(f"garbage {i}")
            await asyncio.wait_for(ws.recv(), 5)
    lines = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert lines[0].startswith("bridge: frame from bridge:1 rejected (-32700, 1 so far): invalid JSON")
    assert len(lines) == 20


async def test_a_browser_client_gives_the_token_in_its_url() -> None:
    from websockets.exceptions import InvalidStatus

    app = await start_app(token="s3cret")
    try:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(app.url("?token=wrong"), proxy=None):
                pass
        assert refused.value.response.status_code == 401
        async with running(FirehoseExampleClient, app.url("?token=s3cret")) as client:
            await admitted(app.bridge, 1)
            await app.heard(await client.say("with the token in the URL", to="akari"))
    finally:
        await app.bridge.stop()
        await app.broker.aclose()
        await app.bus.aclose()
