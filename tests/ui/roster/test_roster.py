"""The roster against a real started runtime with three scripted companions: what the user sees of each one."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimeControl, RuntimePeople, RuntimeRemoteCompanions
from app.runtime.runtime import Runtime
from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import say
from tests.ui.conftest import signal_fired, switch_language
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from ui.roster.colors import companion_color
from ui.roster.roster import AVATAR_SIZE, RosterPanel


def _panel(qtbot: QtBot, runtime: Runtime, language: str) -> RosterPanel:
    switch_language(language)
    panel = RosterPanel(runtime.bus, RuntimeControl(runtime), RuntimePeople(runtime), RuntimeRemoteCompanions(runtime))
    qtbot.addWidget(panel)
    panel.resize(240, 360)
    panel.show()
    panel.attach()
    return panel


def _index(panel: RosterPanel, companion_id: str) -> QModelIndex:
    index = panel.index_of(companion_id)
    assert index is not None
    return index


def _icon(panel: RosterPanel, companion_id: str) -> QIcon:
    icon = panel.icon_of(companion_id)
    assert icon is not None
    return icon


def _text(panel: RosterPanel, companion_id: str) -> str:
    text = panel.text_of(companion_id)
    assert text is not None
    return text


def _actions(menu: QMenu) -> dict[str, bool]:
    return {action.text(): action.isEnabled() for action in menu.actions()}


async def test_rows_follow_a_three_companion_conversation_and_a_muted_companion_gets_no_turn(
        qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, "流れ星の話がしたい"))
    lines(cast["akari"], say("みんな、流れ星を見たことある？"))
    votes(cast["souta"], ("listen", 2), ("listen", 1))  # the user's message, then Akari's
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        panel = _panel(qtbot, runtime, "ja")
        assert panel.companion_ids() == ["akari", "hina", "souta"]
        assert [_text(panel, c) for c in panel.companion_ids()] == [
            "あかり\n聞いています", "ひな\n聞いています", "颯太\n聞いています"]
        for companion in panel.companion_ids():  # the avatar is the companion's own colour, the same as in the chat
            image = _icon(panel, companion).pixmap(AVATAR_SIZE, AVATAR_SIZE).toImage()
            assert image.pixelColor(4, AVATAR_SIZE // 2).name() == companion_color(companion).name()

        # Keyboard only: into the list, down to Hina, Tab to the mute button, Space.
        panel.list.setFocus()
        qtbot.keyClick(panel.list, Qt.Key.Key_Down)
        qtbot.keyClick(panel.list, Qt.Key.Key_Down)
        assert panel.current_id() == "hina"
        assert panel.mute_button.text() == "ミュート"
        async with signal_fired(panel.state_changed):
            qtbot.keyClick(panel.mute_button, Qt.Key.Key_Space)
        assert _text(panel, "hina") == "ひな\nミュート中"
        assert panel.mute_button.text() == "ミュート解除"
        assert not panel.next_button.isEnabled()  # a muted companion cannot be asked to speak next

        seen: dict[str, list[str]] = {c: [] for c in panel.companion_ids()}
        panel.state_changed.connect(lambda companion, state: seen[companion].append(state))
        runtime.parts.conversations.send("みんな、こんばんは")
        view = await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        await runtime.bus.drain()
        await until(panel.state_changed, lambda: panel.state_of("akari") == "listening")

        assert view.ended_reason == "no-speaker"
        assert [t.speaker for t in talk.turns()] == ["akari", None]
        states = seen["akari"]
        assert "thinking" in states
        assert "speaking" in states
        assert states.index("thinking") < states.index("speaking") < len(states) - 1
        assert states[-1] == "listening"
        assert "thinking" in seen["souta"]  # voted...
        assert "speaking" not in seen["souta"]  # ...but never took the floor
        assert seen["hina"] == []  # muted all along: never asked to vote, never thinking, never speaking
        assert _text(panel, "hina") == "ひな\nミュート中"
        assert not cast["hina"].requests
        switch_language("en")
        assert [_text(panel, c) for c in panel.companion_ids()] == ["Akari\nlistening", "Hina\nmuted",
                                                                  "Souta\nlistening"]
        assert panel.mute_button.text() == "Unmute"
        cast.assert_used_up()
        panel.detach()
        talk.close()


async def test_the_context_menu_mutes_unmutes_and_asks_a_companion_to_speak_next(
        qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 9), ("listen", 0))  # the user's message, then Souta's
    votes(cast["hina"], ("speak", 5), ("listen", 0))
    votes(cast["souta"], ("listen", 0))
    lines(cast["souta"], say("Let me take this one."))
    async with scripted_runtime(cast) as runtime:
        assert runtime.parts.conversation_manager is not None
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        panel = _panel(qtbot, runtime, "en")
        assert _text(panel, "akari") == "Akari\nlistening"

        menu = panel.menu_for("akari")
        assert _actions(menu) == {"Mute": True, "Speak next": True, "Leave the conversation": True}
        async with signal_fired(panel.state_changed):
            menu.actions()[0].trigger()
        assert _text(panel, "akari") == "Akari\nmuted"
        menu = panel.menu_for("akari")
        assert _actions(menu) == {"Unmute": True, "Speak next": False, "Leave the conversation": True}
        async with signal_fired(panel.state_changed):
            menu.actions()[0].trigger()
        assert _text(panel, "akari") == "Akari\nlistening"

        # Shift+F10 (or the Menu key) opens the current row's menu; Down and Enter choose "Speak next".
        panel.list.setFocus()
        panel.list.setCurrentIndex(_index(panel, "souta"))
        qtbot.keyClick(panel.list, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
        opened = panel.menu
        assert opened is not None
        assert opened.isVisible()
        assert _actions(opened) == {"Mute": True, "Speak next": True, "Leave the conversation": True}
        qtbot.keyClick(opened, Qt.Key.Key_Down)
        qtbot.keyClick(opened, Qt.Key.Key_Return)
        await talk.wait_for(lambda v: v.forced_next == "souta")
        assert panel.menu is None

        runtime.parts.conversations.send("What do you all think?")
        view = await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        assert [t.speaker for t in talk.turns()] == ["souta", None]  # Akari wanted it more; Souta was asked
        assert view.ended_reason == "no-speaker"

        runtime.parts.conversation_manager.remove_participant("hina")  # Hina leaves the conversation
        await until(panel.state_changed, lambda: panel.state_of("hina") == "absent")
        assert _text(panel, "hina") == "Hina\nnot here"
        assert _actions(panel.menu_for("hina")) == {"Mute": False, "Speak next": False, "Join the conversation": True}
        panel.list.setCurrentIndex(_index(panel, "hina"))
        assert not panel.mute_button.isEnabled()
        assert not panel.next_button.isEnabled()
        cast.assert_used_up()
        panel.detach()
        talk.close()


async def test_a_companion_leaves_the_conversation_from_the_roster_and_comes_back(
        qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 9))
    votes(cast["souta"], ("listen", 0))
    lines(cast["akari"], say("おかえり！"))
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        panel = _panel(qtbot, runtime, "en")
        menu = panel.menu_for("hina")
        leave = next(a for a in menu.actions() if a.text() == "Leave the conversation")
        async with signal_fired(panel.state_changed):
            leave.trigger()
        assert _text(panel, "hina") == "Hina\nnot here"
        assert "hina" not in runtime.parts.conversation_manager.present
        assert [m.id for m in runtime.parts.cast.roster()] == ["akari", "souta"]  # the others' prompts: not here
        runtime.parts.conversations.send("みんな、ただいま")  # Hina neither votes nor hears it
        await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        hina = runtime.parts.cast.companions["hina"]
        assert all("ただいま" not in m.text for m in hina.context())

        menu = panel.menu_for("hina")
        join = next(a for a in menu.actions() if a.text() == "Join the conversation")
        async with signal_fired(panel.state_changed):
            join.trigger()
        assert _text(panel, "hina") == "Hina\nlistening"
        assert "hina" in runtime.parts.conversation_manager.present
        panel.detach()
