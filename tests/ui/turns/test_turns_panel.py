"""The turn-taking view against a real started runtime with three scripted companions: votes, the floor and why,
closing progress, how the conversation ended, and the buttons that steer it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimeControl, RuntimePeople
from app.runtime.runtime import Runtime
from companions.conversation.readmodel import ConversationReadModel, ConversationView
from companions.llm.scripted import say, stall
from tests.ui.conftest import switch_language
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from ui.turns.panel import TurnsPanel, VoteRow


@dataclass(frozen=True)
class Shown:
    """What the panel showed at one moment."""

    rows: dict[str, VoteRow]
    turn: str
    floor: str
    speaking: str


def _panel(qtbot: QtBot, runtime: Runtime, language: str) -> TurnsPanel:
    switch_language(language)
    panel = TurnsPanel(runtime.bus, RuntimeControl(runtime), RuntimePeople(runtime))
    qtbot.addWidget(panel)
    panel.resize(640, 560)
    panel.show()
    panel.attach()
    return panel


async def _shown_when(panel: TurnsPanel, condition: Callable[[ConversationView], bool]) -> Shown:
    """What the panel showed right after rendering the first view for which ``condition`` holds."""
    seen: list[Shown] = []

    def check() -> bool:
        if not seen and condition(panel.view):
            seen.append(Shown({r.companion: r for r in panel.rows()}, panel.turn_label.text(), panel.floor.text(),
                              panel.speaking.text()))
        return bool(seen)

    await until(panel.rendered, check, timeout=20)
    return seen[0]


def _turn(number: int, phase: str, speaker: str | None = None) -> Callable[[ConversationView], bool]:
    return lambda v: (v.turn is not None and v.turn.number == number and v.turn.phase == phase
                      and (speaker is None or v.turn.speaker == speaker))


async def test_votes_the_floor_and_why_then_stop_ends_the_conversation_and_says_so(
        qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, "I love meteors"))
    lines(cast["akari"], say("Hello everyone! Did you see the meteor shower?"))
    votes(cast["hina"], ("speak", 5, "I saw it too"), ("speak", 6))  # the user's message, then Akari's
    lines(cast["hina"], stall())  # Hina is still thinking when the user stops
    votes(cast["souta"], ("listen", 2, "nothing to add"), ("listen", 1))
    async with scripted_runtime(cast) as runtime:
        panel = _panel(qtbot, runtime, "en")
        assert panel.status.text() == "No conversation yet: write to the companions."
        assert [(r.companion, r.vote) for r in panel.rows()] == [
            ("akari", "not asked"), ("hina", "not asked"), ("souta", "not asked")]
        assert not panel.stop_button.isEnabled()
        assert not panel.interrupt_button.isEnabled()

        runtime.parts.conversations.send("Did anyone see the sky last night?")
        voting = await _shown_when(panel, lambda v: v.turn is not None and v.turn.number == 1
                                   and any(x.status == "voted" for x in v.turn.votes))
        assert voting.turn == "Turn 1 · after you · voting"
        assert "voting…" in {r.vote for r in voting.rows.values()}  # the votes arrive one by one

        chosen = await _shown_when(panel, _turn(1, "composing", "akari"))
        assert chosen.turn == "Turn 1 · after you · composing"
        akari, hina, souta = chosen.rows["akari"], chosen.rows["hina"], chosen.rows["souta"]
        assert (akari.name, akari.vote, akari.importance, akari.reason, akari.speaker) == (
            "▶ Akari", "speak", "8", "I love meteors", True)
        assert (hina.vote, hina.importance, hina.reason, hina.speaker) == ("speak", "5", "I saw it too", False)
        assert (souta.vote, souta.importance, souta.closing) == ("listen", "2", "going on")
        assert chosen.floor == "Speaker: Akari — Akari wants to speak most (importance 8)"

        speaking = await _shown_when(panel, lambda v: v.floor == "akari")
        assert speaking.speaking == "Speaking now: Akari"

        second = await _shown_when(panel, _turn(2, "composing", "hina"))
        assert second.turn == "Turn 2 · after Akari · composing"
        assert second.rows["akari"].vote == "not asked"  # nobody votes on their own words
        assert second.floor == "Speaker: Hina — Hina wants to speak most (importance 6)"
        assert panel.history_lines()[0] == "1. Akari — Akari wants to speak most (importance 8)"
        await until(panel.rendered, panel.stop_button.isEnabled)

        qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
        await until(panel.rendered, lambda: panel.view.status == "ended")
        assert panel.ended.isVisible()
        assert panel.ended.text() == "Ended: stopped by you"
        assert panel.status.text() == "Conversation ended"
        assert not panel.stop_button.isEnabled()
        assert not panel.interrupt_button.isEnabled()
        assert panel.history_lines() == ["1. Akari — Akari wants to speak most (importance 8)",
                                         "2. Hina — cancelled"]
        switch_language("ja")
        assert panel.ended.text() == "終了: あなたが止めました"
        assert panel.history_lines() == ["1. あかり — あかり が一番話したがっています（重要度 8）",
                                         "2. ひな — 取り消し"]
        await runtime.parts.conversations.new()  # another conversation: its turns start afresh
        await runtime.bus.drain()
        assert panel.history_lines() == []
        cast.assert_used_up()
        panel.detach()


async def test_mute_interrupt_and_speak_next_in_japanese_and_the_closing_progress(
        qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 7), ("speak", 7))  # before and after the interruption
    lines(cast["akari"], stall())  # interrupted while thinking
    votes(cast["souta"], ("speak", 4), {"state": "listen", "importance": 0, "closing": "terminal"})
    lines(cast["souta"], say("今日はこのへんで。またね！"))
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        panel = _panel(qtbot, runtime, "ja")
        assert panel.status.text() == "まだ会話はありません。話しかけてみましょう。"

        # Keyboard only: into the table, down to Hina, Tab to the mute button, Space.
        panel.votes.setFocus()
        while panel.chosen() != "hina":
            qtbot.keyClick(panel.votes, Qt.Key.Key_Down)
        assert panel.mute_button.text() == "ミュート"
        panel.mute_button.setFocus()
        qtbot.keyClick(panel.mute_button, Qt.Key.Key_Space)
        await until(panel.rendered, lambda: panel.view.muted == ("hina",))
        hina = panel.row_of("hina")
        assert hina is not None
        assert hina.vote == "ミュート中"
        assert panel.mute_button.text() == "ミュート解除"
        assert not panel.next_button.isEnabled()

        runtime.parts.conversations.send("こんにちは")
        composing = await _shown_when(panel, _turn(1, "composing", "akari"))
        assert composing.turn == "ターン 1 · あなた の発言のあと · 発言を考え中"
        assert composing.rows["hina"].vote == "ミュート中"  # not asked to vote
        assert composing.floor == "話し手: あかり — あかり が一番話したがっています（重要度 7）"
        await until(panel.rendered, panel.interrupt_button.isEnabled)

        qtbot.mouseClick(panel.interrupt_button, Qt.MouseButton.LeftButton)
        await until(panel.rendered, lambda: panel.view.status == "ended")
        assert panel.ended.text() == "終了: あなたが割り込みました。コンパニオンはあなたの発言を待っています"

        panel.choose("souta")
        assert panel.next_button.isEnabled()
        qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)  # resumes on the user's message
        forced = await _shown_when(panel, lambda v: v.turn is not None and v.turn.number == 2
                                   and v.turn.speaker == "souta")
        assert forced.floor == "話し手: 颯太 — 颯太 が次に話すよう指定されました"
        assert forced.rows["souta"].closing == "お別れ"
        view = await talk.wait_for(lambda v: v.status == "ended" and v.turns_taken == 1, timeout=20)
        await until(panel.rendered, lambda: panel.view.revision >= view.revision)

        assert view.ended_reason == "closed"
        assert panel.ended.text() == "終了: 颯太 が会話を締めくくりました"
        assert panel.closing_steps() == [("継続", "reached"), ("終わりの気配", "reached"), ("まとめ", "reached"),
                                         ("お別れ", "current")]  # every stage reached
        assert panel.closing.text().endswith("<b>お別れ</b>")
        assert not cast["hina"].requests  # muted all along
        await runtime.bus.drain()  # storage is a bus subscriber: let it write what was said
        assert [m.params.from_ for m in [s.message for s in await runtime.store.messages(
            runtime.parts.conversations.active_id or 0)]] == ["user", "souta"]
        cast.assert_used_up()
        panel.detach()
        talk.close()
