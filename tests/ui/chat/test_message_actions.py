"""Beside the message box: a Stop button while the companions talk, and Copy on a message."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import say, stall
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from ui.chat.transcript import KEY_PROPERTY
from ui.window.main_window import MainWindow


async def test_stop_beside_the_message_box_cuts_in_and_a_message_can_be_copied(
        qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, "流れ星の話"))
    lines(cast["akari"], say("見た見た！流れ星がいくつも流れてた。"))
    votes(cast["hina"], ("listen", 2), ("speak", 7, "わたしも"))
    lines(cast["hina"], stall(text_first="わたしも見たかったな。流れ星"))  # still talking when the user stops
    votes(cast["souta"], ("listen", 1), ("listen", 1))
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.resize(790, 560)
        window.show()
        await window.attach()
        actions = window.message_actions
        assert actions.stop_button.isVisible()
        assert actions.stop_button.text() == "止める"
        assert not actions.stop_button.isEnabled()  # nothing to stop yet
        window.chat.input.insertPlainText("昨日の夜、空を見た？")
        window.chat.submit()
        await until(window.chat.message_shown, lambda: window.chat.message_count == 2, 20)
        await until(window.chat.composing_changed, lambda: "わたしも見たかったな" in window.chat.view.toPlainText())
        assert actions.stop_button.isEnabled()
        actions.stop_button.click()
        await talk.wait_for(lambda v: v.status == "ended", timeout=10)
        assert talk.view.ended_reason == "stopped"
        assert "わたしも見たかったな" not in window.chat.view.toPlainText()  # the line in the making is gone
        await until(window.turns.rendered, lambda: not actions.stop_button.isEnabled())

        akari = next(b for b in window.chat.view.bubbles() if "流れ星がいくつも" in b.text)
        view = window.chat.view
        frame = next(f for f in view.document().rootFrame().childFrames()
                     if f.frameFormat().property(KEY_PROPERTY) == akari.key)
        box = view.document().documentLayout().frameBoundingRect(frame)
        point = QPoint(int(box.center().x()), int(box.center().y()) - view.verticalScrollBar().value())
        assert actions.message_at(point) == akari.key
        actions.copy_message(akari.key)
        assert QGuiApplication.clipboard().text() == "見た見た！流れ星がいくつも流れてた。"
        window.close()


async def test_edit_delete_and_say_again_and_the_companions_memory_follows(qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, "流れ星の話"))
    lines(cast["akari"], say("流れ星を三つ見たよ。"), say("流れ星を五つも見たんだよ！"))
    votes(cast["hina"], ("listen", 2), ("listen", 1), ("listen", 1))
    votes(cast["souta"], ("listen", 1), ("listen", 1), ("listen", 1))
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        actions = window.message_actions
        window.chat.input.insertPlainText("昨日の夜、空を見た？")
        window.chat.submit()
        await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        await runtime.bus.drain()
        assert runtime.parts.conversations.active_id is not None
        stored = await runtime.store.messages(runtime.parts.conversations.active_id)
        user_id, akari_id = (s.message.params.id for s in stored)
        assert runtime.parts.cast is not None
        hina = runtime.parts.cast.companions["hina"].memory

        # Say it again: Akari's line goes and she answers the user's message anew.
        await actions.say_again(akari_id)
        await until(window.chat.message_shown, lambda: "五つも" in window.chat.view.toPlainText(), 20)
        await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        await runtime.bus.drain()
        texts = [s.message.params.message for s in await runtime.store.messages(runtime.parts.conversations.active_id)]
        assert texts == ["昨日の夜、空を見た？", "流れ星を五つも見たんだよ！"]
        assert "三つ" not in window.chat.view.toPlainText()
        assert [e.text for e in hina.entries] == texts  # Hina heard only what stands now

        # Edit the user's message; delete Akari's line: the transcript, the store and every memory follow.
        dialog = actions.edit(user_id)  # what "Edit…" opens: the words as they stand, in the user's language
        assert dialog.textValue() == "昨日の夜、空を見た？"
        assert dialog.windowTitle() == "メッセージを編集"
        assert dialog.isVisible()  # open(), not exec(): the loop runs on meanwhile
        dialog.reject()
        await actions.revise(user_id, "おととい、空を見た？")  # what saving the dialog does
        new_akari = [b.key for b in window.chat.view.bubbles()][-1]
        await actions.revise(new_akari, None)
        await runtime.bus.drain()
        texts = [s.message.params.message for s in await runtime.store.messages(runtime.parts.conversations.active_id)]
        assert texts == ["おととい、空を見た？"]
        assert [e.text for e in hina.entries] == ["おととい、空を見た？"]
        assert [e.text for e in runtime.parts.cast.companions["akari"].memory.entries] == ["おととい、空を見た？"]
        assert "五つも" not in window.chat.view.toPlainText()
        assert "おととい、空を見た？" in window.chat.view.toPlainText()
        window.close()
