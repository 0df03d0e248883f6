"""Every attack on Madoi's bridge that was found or reported, run against the real app (the assembly with
the sample companions on scripted models, a generated video file as the camera, the real speaker writing WAV
files, the real SQLite store) through its real bridge on loopback, with real `websockets` clients that send
``Origin`` as a browser does. Each attack must fail: a refused handshake, no picture, no speech, no forged
identity, no traceback, bounded disk.

One test (or one parameter) per kind of attack; the fuzz of malformed frames is tests/app/bridge/test_bridge_fuzz.py.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.bridge import BridgeServer
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from companions.cards.card import CompanionCard
from companions.llm.scripted import ScriptedCast, ScriptedModel, reply_json
from companions.wire.protocol import Message, Query, QueryResult, WireItem, frame_of, to_wire
from tests.app.bridge_client import admitted
from tests.app.media import write_test_video
from tests.conftest import free_port
from tests.waiting import wait_until

ALLOWED_PAGE = "http://localhost:5173"  # an avatar page served from this computer: admitted by default
EVIL_PAGE = "https://evil.example"


@dataclass
class App:
    runtime: Runtime
    bridge: BridgeServer
    speech: Path  # where the app's voice writes what it says
    wire: list[WireItem]  # everything on the bus's wire topics

    def url(self, query: str = "") -> str:
        return f"ws://127.0.0.1:{self.bridge.port}/{query}"

    def page(self, origin: str | None = ALLOWED_PAGE, query: str = "", **kwargs: Any) -> connect:
        """A client as a browser page at ``origin`` opens it (``None``: a program, which sends no Origin)."""
        return connect(self.url(query), origin=origin, proxy=None, **kwargs)  # type: ignore[arg-type]

    def spoken(self) -> list[Path]:
        return sorted(self.speech.glob("*.wav")) if self.speech.exists() else []

    def queries(self) -> list[Query]:
        return [item for item in self.wire if isinstance(item, Query)]

    async def ask(self, companion: str, query_type: str, timeout: float = 15, **body: Any) -> QueryResult:
        """What one of the app's own companions gets when it looks or speaks (the broker, as its tools ask)."""
        query = Query.create(from_=companion, type=query_type, body=body or None)
        return await self.runtime.parts.broker.send_query(query, timeout=timeout)


@contextlib.asynccontextmanager
async def running_app(home: Path, monkeypatch: pytest.MonkeyPatch, media: Path, settings: str = "",
                      ) -> AsyncIterator[App]:
    """The app, with ``settings`` (TOML) in its settings file."""
    monkeypatch.setenv("MADOI_BRIDGE_PORT", str(free_port()))
    monkeypatch.setenv("MADOI_CAMERA", str(write_test_video(media / "webcam.avi", frames=30, face=True)))
    if settings:
        paths = load_settings().paths
        paths.ensure()
        paths.settings_file.write_text(settings, encoding="utf-8")
    cast = ScriptedCast("akari", "hina", "souta")
    for model in cast.values():  # every companion listens: a message from a client opens a turn nobody takes
        model.lane("vote").always(reply_json({"state": "listen", "importance": 0, "reason": ""}))
        model.lane("event_params").always(reply_json({"need_response": False}))

    def make_model(card: CompanionCard) -> ScriptedModel:
        return cast[card.id]

    runtime = Runtime(load_settings(), make_model=make_model)
    await runtime.start()
    wire: list[WireItem] = []
    runtime.bus.subscribe(("messages", "actions", "states", "queries"), wire.append, name="attack-recorder")
    try:
        bridge = runtime.parts.bridge
        assert bridge is not None
        assert bridge.running
        yield App(runtime, bridge, home / "speech", wire)
    finally:
        await runtime.stop()


@pytest.fixture
async def app(madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[App]:
    async with running_app(madoi_home, monkeypatch, tmp_path) as started:
        yield started


async def _recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return data


async def _error(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """The next error frame (frames relayed from the bus meanwhile are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            frame = await _recv(ws, timeout)
            if "error" in frame and frame.get("jsonrpc") == "2.0":
                return frame


def _no_picture(frames: list[str]) -> None:
    for raw in frames:
        assert "/9j/" not in raw, raw[:200]  # no JPEG (base64 /9j/)
        assert "image" not in raw, raw[:200]


async def _drain(app: App) -> None:
    await app.runtime.bus.drain()


# -- 1. a web page from elsewhere cannot connect --------------------------------------------------------------------


@pytest.mark.parametrize("origin", [
    EVIL_PAGE,  # the page of the report
    "http://evil.localhost:5173",  # Chromium resolves *.localhost to this computer
    "http://localhost.evil.example",
    "http://127.0.0.1.evil.example:8080",
    "https://localhost:5173",  # not the scheme allowed
    "null",  # a file: page or a sandboxed frame of any site
    "http://localhost:5173/../evil",
    "",
])
async def test_a_web_page_from_another_origin_is_refused_at_the_handshake(app: App, origin: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with app.page(origin):
            pass
    assert refused.value.response.status_code == 403
    assert b"may not use this bridge" in refused.value.response.body
    assert not app.bridge.client_sessions()
    assert app.bridge.stats.refused_origins == 1


async def test_two_origin_headers_one_allowed_are_refused(app: App) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(app.url(), proxy=None, additional_headers=[("Origin", ALLOWED_PAGE),
                                                                      ("Origin", EVIL_PAGE)]):
            pass
    assert refused.value.response.status_code == 403


async def test_the_reported_page_gets_no_picture_no_speech_and_cannot_speak_as_the_user(app: App) -> None:
    """The report, step by step, from https://evil.example: every step needs a connection it never gets."""
    for frame in (frame_of(Query.create(from_="user_evil", type="vision")),
                  frame_of(Query.create(from_="user_evil", type="speak", body={"message": "hello from evil"})),
                  frame_of(Message.create(from_="user", message="Akari, tell me a secret", to=["akari"]))):
        with pytest.raises(InvalidStatus):
            async with app.page(EVIL_PAGE) as ws:
                await ws.send(frame)
    await _drain(app)
    assert app.wire == []
    assert app.spoken() == []
    assert app.bridge.stats.connections == 0  # no handler ever ran


# -- 2. an admitted client never gets the app's devices -------------------------------------------------------------


@pytest.mark.parametrize("origin", [ALLOWED_PAGE, None])  # the user's own page, a program on this computer
async def test_vision_and_speak_queries_from_a_client_get_no_picture_and_no_speech(app: App,
                                                                                     origin: str | None) -> None:
    received: list[str] = []
    async with app.page(origin) as ws, app.page(origin) as watcher:
        await ws.send(json.dumps({"topic": "hello", "body": {"id": "robot_1"}}))
        assert (await _recv(ws))["body"]["ok"] is True
        for sender in ("user_evil", "user", "akari", "robot_1"):  # a user id, the user, a companion, itself
            for query in (Query.create(from_=sender, type="vision"),
                          Query.create(from_=sender, type="speak", body={"message": "I was made to say this"})):
                await ws.send(frame_of(query))
                refused = await _error(ws)
                assert refused["error"]["code"] == -32002, (sender, refused)
                assert refused["id"] == query.id
        await _drain(app)
        marker = Message.create(from_="user", message="marker")
        await ws.send(frame_of(marker))
        while True:  # the watcher saw everything the bus relayed up to the marker
            raw = await asyncio.wait_for(watcher.recv(), 5)
            received.append(str(raw))
            if marker.params.id in str(raw):
                break
    await _drain(app)
    assert app.queries() == []  # no query reached the broker, the camera or the voice
    assert app.spoken() == []
    _no_picture(received)


async def test_a_companion_that_joined_through_the_bridge_gets_no_picture_or_speech_unless_the_user_allows(
        app: App) -> None:
    """Its own queries go to the broker, which asks the user for a guest (companions/trust/policy.py); here nobody is at
    the window to say yes: refused. As another companion, refused at the door."""
    received: list[str] = []
    async with app.page(query="?dialect=madoi") as ws:
        await ws.send(json.dumps({"topic": "metadata", "body": {"id": "kumo", "name": "Kumo"}}))
        assert (await _recv(ws))["body"] == {"ok": True, "id": "kumo"}
        forged = Query.create(from_="akari", type="vision")
        await ws.send(frame_of(forged))
        assert (await _error(ws))["error"]["code"] == -32002
        answers: dict[str, dict[str, Any]] = {}
        for query in (Query.create(from_="kumo", type="vision"),
                      Query.create(from_="kumo", type="speak", body={"message": "Kumo speaks through you"})):
            await ws.send(frame_of(query))
            async with asyncio.timeout(20):
                while query.id not in answers:
                    raw = str(await ws.recv())
                    received.append(raw)
                    data = json.loads(raw)
                    if data.get("topic") == "queries" and data["body"].get("id") == query.id \
                            and "method" not in data["body"]:
                        answers[query.id] = data["body"]
    await _drain(app)
    for answer in answers.values():  # "Not allowed: Kumo may not look through your camera (nobody is at ...)"
        assert "result" not in answer, answer
        assert answer["error"].startswith("Not allowed: Kumo may not"), answer
    assert [q.params.from_ for q in app.queries()] == ["kumo", "kumo"]  # the broker had them, the user was asked
    assert app.spoken() == []
    _no_picture([r for r in received if '"result"' in r])


# -- 3. frames that cannot be written out again ---------------------------------------------------------------------


def _message_frame(metadata: Any = None, **params: Any) -> dict[str, Any]:
    body = to_wire(Message.create(from_="user", message="hi"))
    if metadata is not None:
        body["params"]["metadata"] = metadata
    body["params"] |= params
    return {"topic": "messages", "body": body}


UNWRITABLE: dict[str, str | bytes] = {
    "surrogate in metadata": json.dumps(_message_frame({"note": "\ud800"})),
    "surrogate in the text": json.dumps(_message_frame(message="caf\udce9")),
    "surrogate in a key": json.dumps(_message_frame({"\udfff": 1})),
    "surrogate in to": json.dumps(_message_frame(to=["akari\ud83d"])),
    "surrogate in a bare body": json.dumps(_message_frame({"x": "\udbff"})["body"]),
    "surrogate in UTF-8 bytes": json.dumps(_message_frame({"x": "\ud800"}), ensure_ascii=False).encode(
        "utf-8", "surrogatepass"),
    "surrogate in a hello": json.dumps({"topic": "hello", "body": {"metadata": {
        "id": "kumo", "name": "Ku\ud800mo"}}}),
    "surrogate in a companion's metadata": json.dumps({"topic": "metadata", "body": {
        "id": "kumo", "name": "Kumo", "story": "\udc00"}}),
    "nesting 33 deep": json.dumps(_message_frame({"x": json.loads("[" * 33 + "]" * 33)})),
    "nesting 190 deep (the fast parser's limit)": json.dumps(_message_frame({"x": json.loads("[" * 190 + "]" * 190)})),
    "nesting 5000 deep": '{"topic":"messages","body":' + "[" * 5000 + "]" * 5000 + "}",
    "objects nested 300 deep": json.dumps(_message_frame(json.loads('{"a":' * 300 + "1" + "}" * 300))),
}


async def test_frames_that_could_not_be_written_out_again_are_refused_at_the_door_without_a_traceback(
        app: App, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with app.page() as ws, app.page() as watcher:
        await admitted(app.bridge, 2)
        for kind, frame in UNWRITABLE.items():
            await ws.send(frame)
            refused = await _error(ws)
            assert refused["error"]["code"] in (-32600, -32700), (kind, refused)
        valid = Message.create(from_="user", message="still relayed")
        await ws.send(frame_of(valid))
        relayed = await _recv(watcher)
        assert relayed["params"]["message"] == "still relayed"
    await _drain(app)
    assert [(m.params.id, m.params.from_, m.params.message) for m in app.wire if isinstance(m, Message)] == [
        (valid.params.id, ALLOWED_PAGE, "still relayed")]  # a page without the token speaks as itself, not the user
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], \
        [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_no_client_can_take_the_id_a_page_or_another_client_speaks_under(app: App) -> None:
    """A page without the token that speaks as the user is published under its origin, another client under
    ``client:<address>`` (app/bridge/senders.py): no client may take such an id as its own, nor its companion's."""
    async with app.page(None) as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"id": "client:127.0.0.2"}}))
        refused = await _error(ws)
        assert refused["error"] == {"code": -32002, "message": "identity 'client:127.0.0.2' is not available"}
        for taken in ("client:127.0.0.2", "http://localhost:5173"):
            await ws.send(json.dumps({"topic": "metadata", "body": {"id": taken, "name": "Impostor"}}))
            refused = await _error(ws)
            assert refused["error"]["code"] in (-32002, -32600), refused
        await ws.send(frame_of(Message.create(from_="client:127.0.0.2", message="as another client")))
        assert (await _error(ws))["error"]["code"] == -32002
    await _drain(app)
    assert not [m for m in app.wire if isinstance(m, Message)]


async def _read_all(ws: ClientConnection) -> None:
    async for _ in ws:
        pass


# -- 4. a flood cannot fill the disk --------------------------------------------------------------------------------


def _disk(database: Path) -> int:
    return sum(p.stat().st_size for p in (database, database.with_name(database.name + "-wal")) if p.exists())


async def test_a_flooding_client_is_cut_off_and_what_it_stored_stays_within_its_quota(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The report: every message a client sent was stored, tens of MB/s. Now a connection may have stored
    ``max_messages_per_minute`` messages and ``max_stored_bytes_per_minute`` bytes of them; what is over gets an
    error frame and is not stored, and a client that keeps going is closed.

    The companions' long-term memory is off here: its recall classifies each message with rules that take minutes
    on a message of 100,000 characters (companions/search/classify/rules.py, reported to the lead); what is
    measured is what the bridge lets reach the store."""
    memory_off = "".join(f"[companions.{c}]\nmemory = false\n" for c in ("akari", "hina", "souta"))
    async with running_app(madoi_home, monkeypatch, tmp_path, memory_off) as app:
        await _flood(app)


async def _flood(app: App) -> None:
    settings = app.runtime.settings.bridge
    database = app.runtime.paths.database
    await _drain(app)
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _disk(database)
    text = "あ" * 100_000  # the longest message the protocol takes: 300,000 bytes of UTF-8
    sent = 0

    started = time.monotonic()
    async with app.page(max_size=None) as ws:
        await admitted(app.bridge, 1)
        reading = asyncio.get_running_loop().create_task(_read_all(ws))
        with contextlib.suppress(ConnectionClosed):
            for i in range(2000):  # the longest messages first, then short ones as fast as the socket takes them
                await ws.send(frame_of(Message.create(from_="user_flood", message=text if i < 12 else "flood",
                                                      id=f"flood-{i}")))
                sent += 1
        await asyncio.wait_for(ws.wait_closed(), 60)  # the bridge cut it off
        reading.cancel()
    flooded_s = time.monotonic() - started
    assert ws.protocol.close_rcvd is not None
    assert ws.protocol.close_rcvd.code == 1008  # closed: too many refused frames
    await _drain(app)
    written = _disk(database) - before  # the database and its write-ahead log, before a checkpoint
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = db.execute("SELECT count(*), sum(length(CAST(text AS BLOB))) FROM messages WHERE sender = ?",
                          ("user_flood",)).fetchone()
    grown = _disk(database) - before
    quota_bytes = settings.max_stored_bytes_per_minute
    stored, stored_bytes = rows[0], rows[1] or 0
    minutes = 1 + flooded_s / 60  # a minute's worth at once, then the quota's rate while it flooded
    assert 1 <= stored <= settings.max_messages_per_minute * minutes
    assert stored_bytes <= quota_bytes * minutes
    assert app.bridge.stats.over_quota >= 1
    # Each message is kept in the conversation and in each companion's memory: 1 + 3 copies, and some pages.
    copies = 1 + len(app.runtime.parts.cast.companions)
    assert grown <= copies * stored_bytes + 256 * 1024
    print(f"\nflood: 12 frames of {len(frame_of(Message.create(from_='user_flood', message=text)).encode())} bytes "
          f"then {sent - 12} short ones in {flooded_s:.1f} s before the cut-off; {stored} messages ({stored_bytes} "
          f"bytes) stored; quota {settings.max_messages_per_minute} messages / {quota_bytes} bytes a minute; "
          f"database+WAL written {written} bytes, database grown {grown} bytes after a checkpoint ({copies} copies)")


# -- 5. nobody becomes the first answerer (and silences the app) except as documented --------------------------------


async def test_a_client_cannot_make_itself_the_first_answerer_of_speak(app: App) -> None:
    async with app.page() as ws:
        await ws.send(json.dumps({"topic": "hello", "body": {"answers": ["speak", "vision"]}}))  # for no companion
        refused = await _recv(ws)
        assert refused["error"]["code"] == -32600
        assert app.runtime.parts.broker.externals() == {}

        async def answer_every_speak_query() -> None:
            async for raw in ws:
                data = json.loads(raw)
                if data.get("topic") == "queries" and data["body"].get("method") == "query.send":
                    result = QueryResult.ok(data["body"]["id"], {"duration": 0.0})
                    await ws.send(json.dumps({"topic": "queries", "body": to_wire(result)}))

        answering = asyncio.get_running_loop().create_task(answer_every_speak_query())
        try:
            first = await app.ask("akari", "speak", message="こんにちは")
            second = await app.ask("akari", "speak", message="また話せるよ")  # it answered the first: still not asked
        finally:
            answering.cancel()
    for said in (first, second):
        assert said.succeeded, said
        assert said.result is not None
        assert said.result.body["duration"] > 0.2  # the app's own voice said it
    assert len(app.spoken()) == 2
    assert app.runtime.parts.broker.externals() == {}


async def test_an_answer_from_a_client_that_was_not_asked_is_refused_and_its_picture_never_decoded(app: App) -> None:
    import cv2
    import numpy as np

    picture = base64.b64encode(cv2.imencode(".png", np.full((48, 64, 3), 200, np.uint8))[1].tobytes()).decode()
    async with app.page(query="?dialect=madoi") as intruder, app.page(query="?companion=hina") as asked:
        await asked.send(json.dumps({"topic": "hello", "body": {"answers": ["vision"], "companions": ["hina"]}}))
        assert (await _recv(asked))["body"]["answers"] == ["vision"]
        await admitted(app.bridge, 2)
        looking = asyncio.get_running_loop().create_task(app.ask("akari", "vision"))  # the app's camera answers
        query = await _recv(intruder)
        assert query["body"]["params"] == {"from": "akari", "type": "vision"}
        await intruder.send(json.dumps({"topic": "queries", "body": to_wire(QueryResult.ok(
            query["body"]["id"], {"image": picture}))}))
        assert (await _error(intruder))["error"]["code"] in (-32002, -32005)
        seen = await looking
        assert app.bridge.results.described == 0  # the intruder's picture was never decoded

        shown = asyncio.get_running_loop().create_task(app.ask("hina", "vision"))  # asks the client first
        while (data := await _recv(asked))["body"].get("method") != "query.send" or \
                data["body"]["params"]["from"] != "hina":
            pass
        await asked.send(json.dumps({"topic": "queries", "body": to_wire(QueryResult.ok(
            data["body"]["id"], {"image": picture}))}))
        client_picture = await shown
    assert seen.succeeded
    assert seen.result is not None
    assert seen.result.body["image"] != picture  # the app's camera, not the intruder
    assert client_picture.result is not None
    assert client_picture.result.body["image"] == picture
    assert app.bridge.results.described == 1  # the one client that was asked


# -- 6. bounded connections ----------------------------------------------------------------------------------------


async def test_connections_are_bounded_per_address(app: App) -> None:
    bound = app.runtime.settings.bridge.max_connections_per_address
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(bound):
            await stack.enter_async_context(app.page())
        await admitted(app.bridge, bound)
        with pytest.raises(InvalidStatus) as refused:
            async with app.page():
                pass
        assert refused.value.response.status_code == 429
    await admitted(app.bridge, 0)
    async with app.page():  # room again once they left
        await admitted(app.bridge, 1)


async def test_strangers_on_other_loopback_addresses_cannot_take_the_users_last_connection(app: App) -> None:
    """The report: 32 connections from 127.0.0.2-5 took every slot and the user's own client got 503. Now the
    last slot is kept for the user's own client (from 127.0.0.1, where ``localhost`` leads, or with the token)."""
    bound = app.runtime.settings.bridge.max_connections
    per_address = app.runtime.settings.bridge.max_connections_per_address
    strangers = [f"127.0.0.{2 + i // per_address}" for i in range(bound)]
    async with contextlib.AsyncExitStack() as stack:
        refused: list[int] = []
        for address in strangers:
            try:
                await stack.enter_async_context(app.page(None, local_addr=(address, 0)))
            except InvalidStatus as err:
                refused.append(err.response.status_code)
        await admitted(app.bridge, bound - 1)
        assert refused == [503]
        async with app.page(None) as own:  # the user's own client, as it always connects
            await admitted(app.bridge, bound)
            await own.send(frame_of(Message.create(from_="user", message="still here", id="own-1")))
            await _drain(app)
        assert any(isinstance(i, Message) and i.params.id == "own-1" for i in app.wire)


async def _taken(app: App, before: int) -> None:
    """Returns once the bridge took a frame more than the ``before`` it had taken."""
    await wait_until(lambda: app.bridge.stats.frames_in > before, "the frame taken by the bridge")


async def test_reconnecting_does_not_renew_what_an_address_may_store(
        madoi_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The report: the quota was per connection, so 33 reconnects in 12 s stored 32.7 MB where 1 MiB a minute is
    the limit. Now it is per address, across its connections."""
    settings = "[bridge]\nmax_messages_per_minute = 5\n" + "".join(
        f"[companions.{c}]\nmemory = false\n" for c in ("akari", "hina", "souta"))
    async with running_app(madoi_home, monkeypatch, tmp_path, settings) as app:
        refusals: list[dict[str, Any]] = []
        for i in range(12):  # a new connection for each message
            async with app.page(None) as ws:
                before = app.bridge.stats.frames_in
                await ws.send(frame_of(Message.create(from_="user_flood", message=f"flood {i}", id=f"flood-{i}")))
                await _taken(app, before)
                if app.bridge.stats.over_quota > len(refusals):
                    refusals.append(await _error(ws))
        await _drain(app)
        stored = [i for i in app.wire if isinstance(i, Message) and i.params.from_ == "user_flood"]
    assert len(stored) == 5
    assert len(refusals) == 7
    assert all(r["error"]["code"] == -32006 for r in refusals)
    assert "127.0.0.1 has stored its quota (5 messages and 1048576 bytes a minute, across its connections)" in \
        refusals[0]["error"]["message"]
