"""The Turns panel shows the active conversation's own state (before: after "new conversation" it showed the previous
one as ended and turn numbers went on; after Stop two companions stayed "voting…"; after a restart it said "no
conversation yet" beside a stored conversation)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimeControl, RuntimePeople
from companions.llm.scripted import stall
from companions.wire.protocol import Message
from tests.ui.conftest import started_runtime
from tests.ui.scripted_runtime import scripted_cast, scripted_runtime, until, votes
from ui.turns.panel import TurnsPanel
from ui.window.main_window import MainWindow


async def test_stop_ends_the_voting_and_a_new_conversation_starts_afresh(qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("listen", 3, "just listening"), ("listen", 2))
    for name in ("hina", "souta"):
        cast[name].lane("vote").add(stall())  # still voting when the user stops
    votes(cast["hina"], ("listen", 1))
    votes(cast["souta"], ("listen", 1))
    async with scripted_runtime(cast) as runtime:
        panel = TurnsPanel(runtime.bus, RuntimeControl(runtime), RuntimePeople(runtime))
        qtbot.addWidget(panel)
        panel.resize(640, 560)
        panel.show()
        panel.attach()
        runtime.parts.conversations.send("Did anyone see the sky last night?")
        await until(panel.rendered, lambda: {r.companion: r.vote for r in panel.rows()} == {
            "akari": "listen", "hina": "voting…", "souta": "voting…"})
        panel.stop()
        await until(panel.rendered, lambda: panel.view.status == "ended")
        assert {r.companion: r.vote for r in panel.rows()} == {
            "akari": "listen", "hina": "stopped before voting", "souta": "stopped before voting"}

        await runtime.parts.conversations.new()
        await runtime.bus.drain()
        assert panel.status.text() == "No conversation yet: write to the companions."
        assert panel.turn_label.text() == "No turn yet"
        assert not panel.ended.isVisible()
        assert [r.vote for r in panel.rows()] == ["not asked"] * 3
        assert panel.history_lines() == []
        assert not panel.stop_button.isEnabled()

        runtime.parts.conversations.send("Good evening")
        await until(panel.rendered, lambda: panel.view.status == "ended")
        assert panel.turn_label.text().startswith("Turn 1 · after you")  # not "Turn 2"
        assert panel.history_lines()[0].startswith("1. ")
        panel.detach()


async def test_a_stored_conversation_can_be_continued_after_a_restart(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        assert runtime.parts.conversations.active_id is not None
        for n in range(13):
            await runtime.store.add_message(runtime.parts.conversations.active_id,
                                            Message.create(from_="akari", message=f"line {n}"))
    async with started_runtime() as runtime:  # the next start opens the latest conversation
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        assert window.chat.message_count == 13
        assert window.turns.status.text() == "この会話には 13 件のメッセージがあります。話しかけると続きます。"
        window.close()
