"""The conversation list against a real started runtime: switch, start a new one, delete after confirming."""

from __future__ import annotations

import datetime
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from app.runtime.panels import RuntimeHistory, RuntimePeople
from app.runtime.runtime import Runtime
from app.storage.database import ConversationInfo
from companions.wire.protocol import Message
from tests.ui.conftest import signal_fired, started_runtime, switch_language
from ui.chat.conversation_list import ConversationList
from ui.chat.conversation_model import ID_ROLE, ConversationsModel
from ui.chat.panel import ChatPanel


async def _two_conversations(runtime: Runtime) -> tuple[int, int]:
    """A first conversation about stars, then a second (active) one about tea."""
    first = runtime.parts.conversations.active_id
    assert first is not None
    for text in ("流れ星を見たよ", "どこで？"):
        await runtime.store.add_message(first, Message.create(from_="akari", message=text))
    second = await runtime.parts.conversations.new()
    await runtime.store.add_message(second, Message.create(from_="hina", message="お茶にしませんか"))
    return first, second


async def _widgets(qtbot: QtBot, runtime: Runtime) -> tuple[ConversationList, ChatPanel]:
    switch_language("ja")
    listing = ConversationList(runtime.bus, RuntimeHistory(runtime))
    chat = ChatPanel(runtime.bus, RuntimeHistory(runtime), RuntimePeople(runtime))
    for widget in (listing, chat):
        qtbot.addWidget(widget)
        widget.resize(400, 400)
        widget.show()
    await listing.attach()
    await chat.attach()
    return listing, chat


def _click(qtbot: QtBot, listing: ConversationList, conversation_id: int) -> None:
    index = listing.index_for(conversation_id)
    assert index.isValid()
    rect = listing.items.visualRect(index)
    qtbot.mouseClick(listing.items.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


async def _listed(listing: ConversationList, ids: list[int]) -> None:
    """Waits (refresh after refresh, each bounded) until the list shows ``ids`` and takes clicks again."""
    while listing.conversation_ids() != ids or not listing.delete_button.isEnabled():
        async with signal_fired(listing.refreshed):
            pass


def _texts(chat: ChatPanel) -> list[str]:
    return [b.text for b in chat.view.bubbles()]


async def test_the_list_shows_conversations_newest_first_and_switching_shows_their_history(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        first, second = await _two_conversations(runtime)
        listing, chat = await _widgets(qtbot, runtime)
        assert listing.conversation_ids() == [second, first]
        labels = listing.labels()
        assert labels[0].startswith("お茶にしませんか\n1 件")
        assert labels[1].startswith("流れ星を見たよ\n2 件")
        current = listing.items.currentIndex()
        assert current.data(ID_ROLE) == second
        assert current.data(Qt.ItemDataRole.FontRole).bold()  # the active conversation is in bold
        assert _texts(chat) == ["お茶にしませんか"]

        async with signal_fired(chat.history_loaded):
            _click(qtbot, listing, first)
        assert runtime.parts.conversations.active_id == first
        assert _texts(chat) == ["流れ星を見たよ", "どこで？"]
        assert listing.index_for(first).data(Qt.ItemDataRole.FontRole).bold()
        assert listing.index_for(second).data(Qt.ItemDataRole.FontRole) is None

        # What the user says now goes to the conversation switched to.
        async with signal_fired(chat.message_shown):
            chat.input.setPlainText("屋上で！")
            chat.submit()
        await runtime.bus.drain()
        assert [m.message.params.message for m in await runtime.store.messages(first)][-1] == "屋上で！"
        listing.detach()
        chat.detach()


async def test_new_starts_an_empty_conversation_unless_the_current_one_is_still_empty(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        first, second = await _two_conversations(runtime)
        listing, chat = await _widgets(qtbot, runtime)
        async with signal_fired(chat.history_loaded):
            qtbot.mouseClick(listing.new_button, Qt.MouseButton.LeftButton)
        fresh = runtime.parts.conversations.active_id
        assert fresh not in (first, second)
        assert chat.view.bubbles() == []
        assert fresh is not None
        await _listed(listing, [fresh, second, first])
        first_line = listing.labels()[0].splitlines()[0]
        assert first_line == "新しい会話"

        async with signal_fired(listing.refreshed):
            qtbot.mouseClick(listing.new_button, Qt.MouseButton.LeftButton)
        assert runtime.parts.conversations.active_id == fresh  # no pile of empty conversations
        assert listing.conversation_ids() == [fresh, second, first]
        listing.detach()
        chat.detach()


async def test_delete_asks_first_and_removes_the_conversation(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        first, second = await _two_conversations(runtime)
        listing, chat = await _widgets(qtbot, runtime)
        listing.select(first)

        boxes: list[QMessageBox] = []
        listing.confirmation_shown.connect(boxes.append)
        listing.items.setFocus()
        qtbot.keyClick(listing.items, Qt.Key.Key_Delete)  # the Delete key asks too
        assert len(boxes) == 1
        box = boxes[0]
        assert box.isVisible()
        assert "流れ星を見たよ" in box.text()
        assert "2 件" in box.text()
        cancel = box.findChild(QPushButton, "cancelDeleteButton")
        assert cancel is not None
        assert box.defaultButton() is cancel  # Enter keeps the conversation
        qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
        assert not box.isVisible()
        assert listing.conversation_ids() == [second, first]
        assert len(await runtime.store.messages(first)) == 2

        qtbot.mouseClick(listing.delete_button, Qt.MouseButton.LeftButton)
        box = boxes[1]
        delete = box.findChild(QPushButton, "confirmDeleteButton")
        assert delete is not None
        async with signal_fired(listing.refreshed):
            qtbot.mouseClick(delete, Qt.MouseButton.LeftButton)
        assert listing.conversation_ids() == [second]
        assert [c.id for c in await runtime.store.list_conversations()] == [second]
        assert await runtime.store.messages(first) == []
        assert runtime.parts.conversations.active_id == second
        assert _texts(chat) == ["お茶にしませんか"]  # the conversation shown was not the one deleted
        listing.detach()
        chat.detach()


async def test_deleting_the_active_conversation_moves_to_another(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        first, second = await _two_conversations(runtime)
        listing, chat = await _widgets(qtbot, runtime)
        assert listing.current_id() == second
        qtbot.mouseClick(listing.delete_button, Qt.MouseButton.LeftButton)
        box = listing.confirmation
        assert box is not None
        delete = box.findChild(QPushButton, "confirmDeleteButton")
        assert delete is not None
        async with signal_fired(chat.history_loaded):
            qtbot.mouseClick(delete, Qt.MouseButton.LeftButton)
        assert runtime.parts.conversations.active_id == first
        assert _texts(chat) == ["流れ星を見たよ", "どこで？"]
        await _listed(listing, [first])

        # Deleting the last one leaves a new, empty conversation to talk in.
        qtbot.mouseClick(listing.delete_button, Qt.MouseButton.LeftButton)
        box = listing.confirmation
        assert box is not None
        delete = box.findChild(QPushButton, "confirmDeleteButton")
        assert delete is not None
        async with signal_fired(chat.history_loaded):
            qtbot.mouseClick(delete, Qt.MouseButton.LeftButton)
        fresh = runtime.parts.conversations.active_id
        assert fresh is not None
        assert chat.view.bubbles() == []
        await _listed(listing, [fresh])
        assert listing.labels()[0].startswith("新しい会話\n0 件")
        assert await runtime.store.messages(fresh) == []
        listing.detach()
        chat.detach()


def test_a_conversation_says_when_as_a_person_would() -> None:
    """"2 messages · 2026-11-26 03:40" for a conversation of a minute ago: today and yesterday in words."""
    now = datetime.datetime(2026, 11, 26, 21, 30)
    for language, today, yesterday, older in (("en", "today 21:05", "yesterday 08:15", "11/3/26 08:15"),
                                              ("ja", "今日 21:05", "昨日 08:15", "2026/11/03 08:15")):
        switch_language(language)
        model = ConversationsModel()
        at = datetime.datetime(2026, 11, 26, 21, 5)
        assert model.when(at, now) == today
        assert model.when(datetime.datetime(2026, 11, 25, 8, 15), now) == yesterday
        assert model.when(datetime.datetime(2026, 11, 3, 8, 15), now) == older
        info = ConversationInfo(1, "流れ星", at.timestamp(), at.timestamp(), 1)
        assert model.label(info, now).endswith(f"· {today}")
