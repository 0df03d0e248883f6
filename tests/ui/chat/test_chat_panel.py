"""The chat view against a real started runtime: what the user sees of messages, composing, speech and history."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimeHistory, RuntimePeople
from app.runtime.runtime import Runtime
from companions.companion.companion import Companion
from companions.companion.participant import CompanionParticipant
from companions.companion.worker import TextStreamed, TurnEnded
from companions.conversation.readmodel import ConversationChanged, ConversationReadModel, ConversationView, TurnView
from companions.devices.ports import SpeakingChanged
from companions.llm.scripted import ScriptedModel, call, reply_json, say
from companions.llm.types import ChatRequest, StreamEvent, TextDelta
from companions.wire.protocol import Emotion, Message
from tests.ui.conftest import signal_fired, started_runtime, switch_language
from ui.chat.bubble import BubbleSnapshot
from ui.chat.panel import ChatPanel
from ui.roster.colors import companion_color


async def _panel(qtbot: QtBot, runtime: Runtime, language: str = "ja") -> ChatPanel:
    switch_language(language)
    panel = ChatPanel(runtime.bus, RuntimeHistory(runtime), RuntimePeople(runtime))
    qtbot.addWidget(panel)
    panel.resize(600, 500)
    panel.show()
    await panel.attach()
    return panel


def _only(panel: ChatPanel) -> BubbleSnapshot:
    bubbles = panel.view.bubbles()
    assert len(bubbles) == 1, [b.key for b in bubbles]
    return bubbles[0]


class GatedModel:
    """The scripted model, except that each streamed piece of a turn waits until the test releases it."""

    def __init__(self, model: ScriptedModel, *, gate: bool = True) -> None:
        self.model = model
        self.gate = gate
        self.release: asyncio.Queue[None] = asyncio.Queue()

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def supports_images(self) -> bool:
        return self.model.supports_images

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.model.stream(request):
            if self.gate and isinstance(event, TextDelta) and request.response_format is None:
                await self.release.get()
            yield event


async def _scripted_akari(runtime: Runtime, model: GatedModel) -> Companion:
    """Akari with a scripted model takes the place of the runtime's Akari in conversation control."""
    assert runtime.parts.cast is not None
    assert runtime.parts.conversation_manager is not None
    assert runtime.parts.broker is not None
    card = runtime.parts.cast.companions["akari"].card
    akari = Companion(card, model, bus=runtime.bus, queries=runtime.parts.broker, language="ja",
                      roster=runtime.parts.cast.roster, names=runtime.parts.cast.name_of,
                      user_id=runtime.settings.general.user_name)
    await akari.start()
    runtime.parts.conversation_manager.remove_participant("akari")
    runtime.parts.conversation_manager.add_participant(CompanionParticipant(akari))
    return akari


async def test_a_turn_streams_into_one_bubble_that_becomes_the_message_and_lights_up_while_spoken(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        scripted = ScriptedModel("akari")  # named by the user: it answers without a vote
        scripted.lane("event_params").add(
            reply_json({"already_replied": False, "need_response": True, "wants_to_see": False}))
        scripted.add(say("こんにちは！星の話をしよう。", chunks=["こんにちは！", "星の話を", "しよう。"]))
        model = GatedModel(scripted)
        akari = await _scripted_akari(runtime, model)
        conversation = ConversationReadModel()
        conversation.attach(runtime.bus)
        panel = await _panel(qtbot, runtime)
        seen_while_speaking: list[tuple[bool, bool]] = []

        def on_speaking(message_id: str, on: bool) -> None:
            bubble = next(b for b in panel.view.bubbles() if b.key == message_id)
            seen_while_speaking.append((on, bubble.highlighted))

        panel.speaking_changed.connect(on_speaking)

        # Address Akari only, through the selector's menu, and send with Enter.
        panel.address.companion_action("akari").trigger()
        assert panel.address.text() == "宛先: あかり"
        panel.input.insertPlainText("あかり、こんにちは")
        async with signal_fired(panel.composing_changed, timeout=10):  # Akari won the floor and composes
            qtbot.keyClick(panel.input, Qt.Key.Key_Return)
        assert panel.input.toPlainText() == ""
        user_bubble, composing = panel.view.bubbles()
        assert user_bubble.header.startswith("あなた")
        assert "→ あかり" in user_bubble.header
        assert composing.provisional
        assert composing.header.startswith("あかり")
        assert "考え中" in composing.header
        assert composing.text == ""

        # The line grows sentence by sentence: a sentence is shown once it passed the checks (before: nothing
        # shown is taken back), so "星の話を" waits for the end of its sentence.
        grown: list[str] = []

        def on_composing(key: str) -> None:
            text = panel.view.bubbles()[-1].text
            if text and (not grown or grown[-1] != text):
                grown.append(text)

        panel.composing_changed.connect(on_composing)
        for _ in range(3):
            model.release.put_nowait(None)
        await conversation.wait_for(lambda v: v.status == "ended", timeout=20)
        assert grown == ["こんにちは！", "こんにちは！星の話をしよう。"]

        await conversation.wait_for(lambda v: v.status == "ended", timeout=20)
        await runtime.bus.drain()
        bubbles = panel.view.bubbles()
        assert len(bubbles) == 2  # the user's and Akari's: the streamed bubble became the message
        said = bubbles[1]
        assert not said.provisional
        assert said.text == "こんにちは！星の話をしよう。"
        assert said.header.startswith("あかり")
        assert said.name_color == companion_color("akari").name()
        assert "😐 ふつう" in said.header  # a plain-text answer is said with a neutral voice
        assert seen_while_speaking == [(True, True), (False, False)]  # lit while the voice played, then not
        assert not said.highlighted
        assert runtime.parts.conversations.active_id is not None
        stored = await runtime.store.messages(runtime.parts.conversations.active_id)
        assert stored[0].message.params.to == ["akari"]
        assert [s.message.params.message for s in stored] == ["あかり、こんにちは", "こんにちは！星の話をしよう。"]
        scripted.assert_used_up()
        panel.detach()
        conversation.close()
        await akari.aclose()


async def test_the_speak_calls_line_grows_in_the_bubble_without_any_json(qtbot: QtBot, madoi_home: Path) -> None:
    line = "ねえ、\"星\"の話をしよう！\nきっと楽しいよ。"
    async with started_runtime() as runtime:
        scripted = ScriptedModel("akari")  # named by the user: it answers without a vote
        scripted.lane("event_params").add(
            reply_json({"already_replied": False, "need_response": True, "wants_to_see": False}))
        scripted.add(call("speak", {"emotion": "happy", "message": line.replace("\\", "")}))
        akari = await _scripted_akari(runtime, GatedModel(scripted, gate=False))
        conversation = ConversationReadModel()
        conversation.attach(runtime.bus)
        panel = await _panel(qtbot, runtime)
        grown: list[str] = []

        def on_composing(key: str) -> None:
            if panel.view.has(key) and panel.view.is_provisional(key):
                grown.append(next(b.text for b in panel.view.bubbles() if b.key == key))

        panel.composing_changed.connect(on_composing)
        runtime.parts.conversations.send("あかり、何か話して", to=["akari"])
        await conversation.wait_for(lambda v: v.status == "ended", timeout=20)
        await runtime.bus.drain()
        said = line.replace("\\", "")
        shown = [t for t in grown if t]
        # It grew sentence by sentence as the call's arguments streamed (each sentence once checked), decoded text
        # only: no JSON, no escapes.
        # (the line break between the two sentences comes with the published line)
        assert shown == ["ねえ、\"星\"の話をしよう！", said.replace("\n", "")], shown
        bubbles = panel.view.bubbles()
        assert [(b.text, b.provisional) for b in bubbles[1:]] == [(said, False)]  # became the message
        assert "😊" in bubbles[1].header
        scripted.assert_used_up()
        panel.detach()
        conversation.close()
        await akari.aclose()


async def test_a_line_replaces_plain_text_and_a_second_attempt_replaces_the_first(qtbot: QtBot,
                                                                                madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = await _panel(qtbot, runtime)
        bus = runtime.bus
        bus.publish(TextStreamed("akari", "t1", "I should greet them."))  # thinking aloud: never said
        bus.publish(TextStreamed("akari", "t1", "Hello", kind="speech"))
        bus.publish(TextStreamed("akari", "t1", " all!", kind="speech"))
        await bus.drain()
        assert _only(panel).text == "Hello all!"
        bus.publish(TextStreamed("akari", "t1", "Done.", kind="text"))  # after the line: not said either
        bus.publish(TextStreamed("akari", "t1", "", done=True))
        await bus.drain()
        assert _only(panel).text == "Hello all!"
        bus.publish(TextStreamed("akari", "t1", "Good evening", kind="speech"))  # asked once more (a repeat)
        await bus.drain()
        assert _only(panel).text == "Good evening"
        panel.detach()


def _changed(turn_id: str, speaker: str, phase: str, revision: int) -> ConversationChanged:
    turn = TurnView(turn_id, "user", 1, phase, speaker=speaker)  # type: ignore[arg-type]
    return ConversationChanged(ConversationView(revision=revision, status="running", turn=turn), phase)


async def test_a_companion_message_shows_name_colour_and_emotion(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = await _panel(qtbot, runtime, "en")
        shown_as: tuple[tuple[Emotion, str], ...] = (("happy", "😊 happy"), ("sad", "😢 sad"), ("angry", "😠 angry"))
        for emotion, shown in shown_as:
            async with signal_fired(panel.message_shown):
                runtime.bus.publish(Message.create(from_="hina", message=f"I feel {emotion}", emotion=emotion,
                                                   to=["souta", "akari", "user"]))
            bubble = panel.view.bubbles()[-1]
            assert shown in bubble.header
            assert bubble.header.startswith("Hina")  # the companion's name in the interface's language
            assert "→" not in bubble.header  # said to everyone: no addressees shown
            assert bubble.name_color == companion_color("hina").name()
            assert bubble.background.rgb() == companion_color("hina").rgb()  # the companion's tint
        assert companion_color("hina") != companion_color("souta") != companion_color("akari")
        panel.detach()


async def test_text_of_a_turn_that_is_never_said_disappears(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = await _panel(qtbot, runtime)
        bus = runtime.bus
        bus.publish(_changed("t1", "souta", "composing", 10_000))
        bus.publish(TextStreamed("souta", "t1", "えーと、"))
        await bus.drain()
        assert _only(panel).text == "えーと、"
        bus.publish(TurnEnded("souta", "t1", "cancelled"))  # the user interrupted
        await bus.drain()
        assert panel.view.bubbles() == []

        # Composed, waiting for the floor, then the conversation was stopped: it was never said either.
        bus.publish(_changed("t2", "hina", "composing", 10_001))
        bus.publish(TextStreamed("hina", "t2", "そうですね。"))
        bus.publish(TextStreamed("hina", "t2", "", done=True))
        bus.publish(TurnEnded("hina", "t2", "finished"))
        await bus.drain()
        assert "話す順番を待っています" in _only(panel).header
        bus.publish(_changed("t2", "hina", "cancelled", 10_002))
        await bus.drain()
        assert panel.view.bubbles() == []
        panel.detach()


async def test_the_final_message_replaces_the_streamed_bubble_in_place_of_two(qtbot: QtBot,
                                                                            madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = await _panel(qtbot, runtime)
        bus = runtime.bus
        bus.publish(TextStreamed("akari", "t1", "ねえ"))
        bus.publish(TextStreamed("hina", "t9", "あら"))  # someone else composing stays below, untouched
        bus.publish(TextStreamed("akari", "t1", "ねえ！"))
        await bus.drain()
        assert [b.text for b in panel.view.bubbles()] == ["ねえねえ！", "あら"]
        said = Message.create(from_="akari", message="ねえねえ！", emotion="happy")
        bus.publish(said)
        bus.publish(TextStreamed("akari", "t1", "（言い終えた）"))  # text after the speech is never said
        bus.publish(TurnEnded("akari", "t1", "finished"))
        await bus.drain()
        bubbles = panel.view.bubbles()
        assert [(b.key, b.text, b.provisional) for b in bubbles] == [
            (said.params.id, "ねえねえ！", False), ("~hina:t9", "あら", True)]

        # Highlight follows the speaker: the latest message not yet spoken, only while the voice plays.
        bus.publish(SpeakingChanged("akari", True))
        await bus.drain()
        speaking = panel.view.bubbles()[0]
        assert speaking.highlighted
        assert "♪ 話しています" in speaking.header
        assert panel.speaking_message("akari") == said.params.id
        bus.publish(SpeakingChanged("akari", False))
        bus.publish(SpeakingChanged("akari", True))  # a second utterance has no new message to light up
        await bus.drain()
        after = panel.view.bubbles()[0]
        assert not after.highlighted
        assert "話しています" not in after.header
        assert after.header == speaking.header.replace("   ♪ 話しています", "")
        panel.detach()


async def test_a_streamed_delta_changes_only_its_bubble_in_a_long_conversation(qtbot: QtBot,
                                                                             madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        assert runtime.parts.conversations.active_id is not None
        for i in range(600):
            await runtime.store.add_message(runtime.parts.conversations.active_id,
                                            Message.create(from_="souta", message=f"メッセージ {i}"))
        panel = await _panel(qtbot, runtime)
        assert len(panel.view) == 600
        changes: list[tuple[int, int, int]] = []
        panel.view.document().contentsChange.connect(lambda at, removed, added: changes.append((at, removed, added)))
        runtime.bus.publish(TextStreamed("akari", "t", "はじめ"))
        await runtime.bus.drain()
        changes.clear()
        runtime.bus.publish(TextStreamed("akari", "t", "続き"))
        await runtime.bus.drain()
        end = panel.view.document().characterCount()
        assert len(changes) == 1
        at, removed, added = changes[0]
        assert (removed, added) == (0, 2)  # two characters inserted, nothing else re-rendered
        assert at > end - 20  # at the bottom, in the streaming bubble
        panel.detach()


async def test_history_shows_after_a_restart(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = await _panel(qtbot, runtime)
        for text in ("一つ目", "二つ目"):
            async with signal_fired(panel.message_shown):
                panel.input.setPlainText(text)
                panel.submit()
        runtime.bus.publish(Message.create(from_="souta", message="三つ目", emotion="sad"))
        await runtime.bus.drain()
        panel.detach()
    async with started_runtime() as again:
        panel = await _panel(qtbot, again)
        bubbles = panel.view.bubbles()
        assert [b.text for b in bubbles] == ["一つ目", "二つ目", "三つ目"]
        assert bubbles[0].header.startswith("あなた")
        assert again.parts.cast is not None
        assert bubbles[2].header.startswith(f"{again.parts.cast.name_of('souta')} ")  # 颯太
        assert "😢 かなしい" in bubbles[2].header
        panel.detach()


async def test_enter_sends_shift_enter_breaks_the_line_and_a_failed_send_keeps_the_text(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        panel = await _panel(qtbot, runtime)
        panel.input.insertPlainText("一行目")
        qtbot.keyClick(panel.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        qtbot.keyClicks(panel.input, "line two")
        assert panel.message_count == 0
        async with signal_fired(panel.message_shown):
            qtbot.keyClick(panel.input, Qt.Key.Key_Return)
        assert _only(panel).text == "一行目\nline two"

        too_long = "あ" * 100_001  # longer than a message may be
        panel.input.setPlainText(too_long)
        async with signal_fired(panel.send_failed):
            qtbot.keyClick(panel.input, Qt.Key.Key_Return)
        assert panel.input.toPlainText() == too_long
        assert panel.error.isVisible()
        assert "入力した文はそのまま残っています" in panel.error.text()
        await runtime.bus.drain()
        assert panel.message_count == 1
        panel.input.clear()
        assert not panel.error.isVisible()

        panel.detach()  # as when the window closes and the runtime stops: nothing sent, nothing lost
        panel.input.setPlainText("まだ送っていない")
        async with signal_fired(panel.send_failed):
            qtbot.keyClick(panel.input, Qt.Key.Key_Return)
        assert panel.input.toPlainText() == "まだ送っていない"
