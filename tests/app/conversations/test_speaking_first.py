"""Speaking first in the real runtime: noticing on (MADOI_NOTICE=true) with the real camera adapter on a generated
room video (real OpenCV and its face detector), scripted models behind the companions. Someone sitting down is
greeted within 3 s; an empty room stays quiet; the user's silence is answered once, only when the setting asks for
it; and never while the user types."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from app.conversations.speaking_first import SpeakingFirst
from app.devices.faces import face_detection_problem
from app.runtime.runtime import Runtime
from app.settings.model import load_settings
from app.settings.sections import ConversationSettings
from companions.conversation.readmodel import ConversationChanged
from companions.conversation.speaking_first import CUE_SENDER, UserTyping
from companions.devices.presence import PresenceNoticed
from companions.llm.scripted import ScriptedCast, mentions, reply_json, say
from companions.wire.bus import BusItem
from companions.wire.protocol import Message
from tests.app.devices.room_videos import RIGHT, Scene, write_room_video
from tests.companions.conversation_sim import Double, Sim, wants
from tests.ui.scripted_runtime import lines, scripted_cast, votes
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(face_detection_problem() is not None, reason="this OpenCV build counts no faces")

GREET_WITHIN_S = 3.0  # the figure: from the change in front of the camera to the companion's first word


class Heard:
    """What the bus carried: the companions' lines and what noticing saw, with when (wall clock) they came."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, Message]] = []
        self.noticed: list[PresenceNoticed] = []
        self.ended: list[str] = []

    def __call__(self, item: BusItem) -> None:
        if isinstance(item, Message) and item.params.from_ != "user":
            self.lines.append((time.time(), item))
        elif isinstance(item, PresenceNoticed):
            self.noticed.append(item)
        elif isinstance(item, ConversationChanged) and item.change == "ended":
            self.ended.append(item.view.ended_reason or "")


def _the_others_listen(cast: ScriptedCast) -> None:
    for name in ("hina", "souta"):
        cast[name].lane("vote").always(reply_json({"state": "listen", "importance": 1, "reason": ""}))


@pytest.fixture
def noticing(madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    madoi_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("MADOI_NOTICE", "true")


@pytest.fixture
def scripted(noticing: None) -> tuple[ScriptedCast, Heard]:
    return scripted_cast(), Heard()


async def _run(cast: ScriptedCast, heard: Heard, video: Path, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("MADOI_CAMERA", str(video))
    runtime = Runtime(load_settings(), make_model=lambda card: cast[card.id])
    await runtime.start()
    runtime.bus.subscribe(("messages", "events"), heard, name="test-heard", direct=True)
    return runtime


async def test_someone_sitting_down_is_greeted_within_3_s_and_the_turns_panel_says_why(
        scripted: tuple[ScriptedCast, Heard], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cast, heard = scripted
    votes(cast["akari"], ("speak", 8, "会いに来てくれた"))
    lines(cast["akari"], say("あ、来てくれたんだ！いらっしゃい。", expect=mentions("机の前に来た")))
    _the_others_listen(cast)
    video = write_room_video(tmp_path / "desk.avi", [Scene(3), Scene(20, faces=(RIGHT,))], fps=10)
    runtime = await _run(cast, heard, video, monkeypatch)
    try:
        await wait_until(lambda: heard.lines, timeout=20)
        said_at, line = heard.lines[0]
        assert (line.params.from_, line.params.message) == ("akari", "あ、来てくれたんだ！いらっしゃい。")
        [arrived] = [n for n in heard.noticed if n.kind == "arrived"]
        assert said_at - arrived.at <= GREET_WITHIN_S + 1.5  # (under the other test lane's load: the bench says 3 s)
        view = runtime.parts.conversation_manager.view
        assert view.turn is not None
        assert view.turn.occasion is not None
        assert view.turn.occasion.kind == "arrived"
        await wait_until(lambda: "spoke-first" in heard.ended, timeout=20)
        # The cue was never published: nothing stored says "noticed", and the chat shows only akari's line.
        conversation = runtime.parts.conversations.active_id
        assert conversation is not None
        stored = await runtime.parts.conversations.messages(conversation)
        assert [(m.message.params.from_, m.message.params.message) for m in stored] == \
            [("akari", "あ、来てくれたんだ！いらっしゃい。")]
        assert all(m.params.from_ != CUE_SENDER for _, m in heard.lines)
        cast.assert_used_up()
    finally:
        await runtime.stop()


async def test_an_empty_room_stays_quiet(
        scripted: tuple[ScriptedCast, Heard], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve seconds of an empty room with the sensor's noise and the light dimmed (bench/presence.py watches ten
    minutes of one): nothing noticed, nobody asked to vote (a scripted model fails on any request it was not given),
    nothing said."""
    cast, heard = scripted
    video = write_room_video(tmp_path / "empty.avi", [Scene(4), Scene(4, light_to=0.6), Scene(4, light=0.6)],
                             fps=10, seed=3)
    runtime = await _run(cast, heard, video, monkeypatch)
    try:
        presence = runtime.parts.devices.presence
        assert presence is not None
        await wait_until(lambda: presence.frames_read >= 22, timeout=60)
        assert heard.noticed == []
        assert heard.lines == []
        assert runtime.parts.speaking_first.opened == []
    finally:
        await runtime.stop()


class _Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


async def test_a_silence_is_answered_once_only_when_chosen_and_never_while_the_user_types(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    akari = Double("akari", wants(7), say_fn=lambda turn, closing: "ねえ、何してるの？")
    sim = await sim_factory(akari)
    settings = ConversationSettings(speak_first_after_min=0)
    clock = _Clock()
    first = SpeakingFirst(sim.bus, sim.manager, lambda: settings, user_id=lambda: "user", language=lambda: "ja",
                          clock=clock, check_every_s=0.01)
    await first.start()
    try:
        clock.now += 3600
        await asyncio.sleep(0.1)
        assert first.opened == []  # off by default: an hour of silence says nothing

        settings = ConversationSettings(speak_first_after_min=10)
        clock.now += 9 * 60
        sim.bus.publish(UserTyping(clock.now))  # typing, not sending: still busy
        clock.now += 5
        await asyncio.sleep(0.1)
        assert first.opened == []
        clock.now += 10 * 60 + 1
        await wait_until(lambda: first.opened, timeout=5)
        assert [(o.kind, o.minutes) for o in first.opened] == [("silence", 10)]
        await sim.ended()
        assert sim.said() == [("akari", "ねえ、何してるの？")]
        assert akari.turns[0].message.params.message == "（ユーザーは10分ほど何も言っていない）"

        clock.now += 3 * 3600  # the next silence waits for the user to say something
        await asyncio.sleep(0.1)
        assert len(first.opened) == 1
        sim.send("ただいま")
        await wait_until(lambda: len(sim.said()) == 2 and not sim.manager.running, timeout=5)
        clock.now += 11 * 60
        await wait_until(lambda: len(first.opened) == 2, timeout=5)
    finally:
        await first.stop()
