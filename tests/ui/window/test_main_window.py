"""The main window against the real runtime: every panel attached, history on start, sending, a three-companion
conversation in every panel, keyboard areas, layout and language."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from companions.conversation.readmodel import ConversationReadModel
from companions.llm.scripted import say
from companions.testing.openai_server import OpenAITestServer
from companions.wire.protocol import Message
from tests.ui.conftest import signal_fired, started_runtime
from tests.ui.scripted_runtime import lines, scripted_cast, scripted_runtime, until, votes
from ui.window.i18n import deliver_language_change
from ui.window.main_window import MainWindow


async def test_typing_enter_sends_stores_and_shows_the_message(qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    for name in ("akari", "hina", "souta"):
        votes(cast[name], ("listen", 1))
    async with scripted_runtime(cast) as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        window.show()
        window.chat.input.insertPlainText("こんにちは、みんな")  # QTest can only type ASCII; an IME inserts text
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        qtbot.keyClicks(window.chat.input, "second line")
        assert window.chat.message_count == 0  # Shift+Enter is a newline, not a send
        async with signal_fired(window.chat.message_shown):
            qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        assert window.chat.message_count == 1
        assert "こんにちは、みんな" in window.chat.view.toPlainText()
        assert window.chat.input.toPlainText() == ""
        assert runtime.parts.conversations.active_id is not None
        await runtime.bus.drain()
        stored = await runtime.store.messages(runtime.parts.conversations.active_id)
        assert stored[0].message.params.message == "こんにちは、みんな\nsecond line"
        window.close()


async def test_history_of_the_stored_conversation_is_shown_on_start(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        assert runtime.parts.conversations.active_id is not None
        for text in ("first", "second"):
            await runtime.store.add_message(runtime.parts.conversations.active_id,
                                            Message.create(from_="akari", message=text))
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        text = window.chat.view.toPlainText()
        assert text.index("first") < text.index("second")
        assert "あかり" in text  # the companion's name in the language setting (ja by default), not its id
        window.close()


async def test_layout_is_remembered_between_runs(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        window.resize(790, 560)  # the offscreen screen is 800x600; the minimum size is 760x520
        window.splitter.setSizes([100, 400, 200])
        remembered = window.splitter.sizes()
        window.close()
        again = MainWindow(runtime)
        qtbot.addWidget(again)
        again.show()
        assert again.size().width() == 790
        assert again.splitter.sizes() == remembered
        again.close()


async def test_every_panel_follows_a_three_companion_conversation(qtbot: QtBot, madoi_home: Path) -> None:
    cast = scripted_cast()
    votes(cast["akari"], ("speak", 8, "流れ星の話がしたい"), ("listen", 1))
    lines(cast["akari"], say("みんな、流れ星を見たことある？"))
    votes(cast["hina"], ("speak", 4), ("speak", 7, "見たよ！"))
    lines(cast["hina"], say("見たよ！とってもきれいだった。"))
    votes(cast["souta"], ("listen", 2), ("listen", 1), ("listen", 0))  # after Hina nobody wants the floor: it ends
    async with scripted_runtime(cast) as runtime:
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        assert window.roster.companion_ids() == ["akari", "hina", "souta"]
        assert window.side.tabText(0) == "発言の順番(&T)"
        assert window.conversations.conversation_ids() == [runtime.parts.conversations.active_id]
        assert window.extras.chat_stack is not None
        assert window.extras.chat_stack.currentWidget() is window.chat.view  # the companions have models
        window.chat.input.insertPlainText("みんな、こんばんは")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        await talk.wait_for(lambda v: v.status == "ended", timeout=20)
        await runtime.bus.drain()
        await until(window.chat.message_shown, lambda: window.chat.message_count == 3)
        text = window.chat.view.toPlainText()
        assert text.index("みんな、こんばんは") < text.index("流れ星を見たことある") < text.index("とってもきれい")
        assert "あかり" in text
        assert "ひな" in text
        await until(window.turns.rendered, lambda: window.turns.ended.text() != "")
        assert "会話は終わりました" in window.turns.status.text()
        assert [t.speaker for t in talk.turns()][:2] == ["akari", "hina"]
        await until(window.roster.state_changed, lambda: window.roster.state_of("akari") == "listening")
        window.close()
    cast.assert_used_up()


async def test_keyboard_reaches_every_area(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        await window.attach()
        qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
        assert window.focusWidget() is window.chat.input
        qtbot.keyClick(window.chat.input, Qt.Key.Key_F6)
        assert window.side.isAncestorOf(window.focusWidget()) or window.focusWidget() is window.side
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_F6)
        assert window.focusWidget() is window.roster.list  # F6 wraps around
        qtbot.keyClick(window.roster.list, Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
        assert window.side.isAncestorOf(window.focusWidget()) or window.focusWidget() is window.side
        qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
        assert window.focusWidget() is window.conversations.items
        for index, key in enumerate((Qt.Key.Key_4, Qt.Key.Key_5, Qt.Key.Key_6)):
            qtbot.keyClick(window, key, Qt.KeyboardModifier.ControlModifier)
            assert window.side.currentIndex() == index
            assert window.side.isAncestorOf(window.focusWidget())  # the panel's first control, or its tab
        window.close()


async def test_the_chosen_side_panel_is_remembered_and_a_language_change_renames_the_tabs(
        qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        await window.attach()
        window.side.setCurrentIndex(2)
        english = runtime.settings.model_copy(
            update={"general": runtime.settings.general.model_copy(update={"language": "en"})})
        window.extras.settings_saved.emit(english)
        deliver_language_change()  # Qt posted LanguageChange: the loop delivers it a moment later
        assert [window.side.tabText(i) for i in range(3)] == ["&Turns", "Searc&h", "&Camera"]
        assert window.roster.title.text().startswith("Companions")
        # The conversation list too (before: it stayed Japanese): its title, buttons and the untitled entry.
        assert window.conversations.title.text() == "Conversations"
        assert window.conversations.new_button.text() == "New"
        assert window.conversations.labels()[0].startswith("New conversation\n0 messages · ")
        window.close()
        again = MainWindow(runtime)
        qtbot.addWidget(again)
        assert again.side.currentIndex() == 2
        again.close()


async def test_the_first_run_panel_follows_the_model_the_runtime_found(qtbot: QtBot, madoi_home: Path) -> None:
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        stack = window.extras.chat_stack
        assert stack is not None
        assert stack.currentWidget() is window.extras.first_run  # no model configured, none detected
        assert not window.extras.first_run.problem.isVisible()  # nothing failed yet: nothing was configured
        async with signal_fired(window.extras.notifications.shown):
            window.extras.first_run.retry_button.click()  # still nothing: the panel stays, and says why
        assert stack.currentWidget() is window.extras.first_run
        assert "モデルサーバーが見つかりませんでした" in window.extras.first_run.problem.text()
        assert window.extras.notifications.history[-1].text.startswith("このパソコンでは")
        window.chat.input.setPlainText("こんにちは")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)  # no model yet: not sent, in red
        assert window.chat.error.isVisible()
        assert window.chat.error.property("result") == "error"
        async with OpenAITestServer(models=["qwen-test"]) as server:
            endpoint = runtime.settings.model_copy(
                update={"llm": runtime.settings.llm.model_copy(update={"base_url": server.base_url})})
            async with signal_fired(window.extras.notifications.shown):
                window.extras.settings_saved.emit(endpoint)  # what the settings dialog does on Save
            assert stack.currentWidget() is window.chat.view
            connected = window.extras.notifications.history[-1]
            assert connected.title == "コンパニオンが話せるようになりました"
            assert connected.text == f"{urlsplit(server.base_url).netloc} の qwen-test で話します。"  # in words
            assert server.base_url in connected.details  # the resolution's own message
            assert runtime.model_problem() is None
            # Before: the red "Not sent" stayed; now the box says what to do, and Enter sends.
            assert window.chat.error.property("result") == "ok"
            assert "Enter" in window.chat.error.text()
            assert "送信できませんでした" not in window.chat.error.text()
            qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
            assert not window.chat.error.isVisible()
            assert window.chat.input.toPlainText() == ""
            assert window.chat.error.property("result") == "error"  # the next problem is red again
            window.turns.stop()
        window.close()


async def test_a_taken_bridge_port_at_start_is_said_in_words_a_newcomer_understands(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:  # another program (or another Madoi) holds the bridge's port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setenv("MADOI_BRIDGE_PORT", str(port))
        async with started_runtime() as runtime:
            window = MainWindow(runtime)
            qtbot.addWidget(window)
            async with signal_fired(window.extras.notifications.shown):
                await window.attach()
            shown = window.extras.notifications.history[-1]
            assert shown.title == "円居は 1 件の問題を抱えて起動しました"
            assert shown.text == (f"いまはほかのプログラムから円居につなげません。ポート {port} が使われています"
                                  "（円居がもう開いているのかもしれません）。設定の「ブリッジ」で別のポートを選べます。")
            assert "bridge cannot listen" in shown.details  # the technical words stay in the details
            window.close()


async def test_problems_at_start_are_shown_once_and_the_rest_works(qtbot: QtBot, madoi_home: Path) -> None:
    cards = madoi_home / "companions"  # the user cards folder (MADOI_HOME holds config and data)
    cards.mkdir(parents=True)
    (cards / "broken.yaml").write_text("id: broken\nname: [not, a, name\n", encoding="utf-8")
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        async with signal_fired(window.extras.notifications.shown):
            await window.attach()
        shown = window.extras.notifications.history[-1]
        assert shown.level == "warning"
        assert shown.title == "円居は 1 件の問題を抱えて起動しました"
        assert "broken.yaml" in shown.text
        assert window.roster.companion_ids() == ["akari", "hina", "souta"]  # the other companions are here
        window.close()
