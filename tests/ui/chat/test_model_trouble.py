"""Failures are said where the user looks: the real app, its companions thinking over real HTTP at a loopback model
server that goes away, says so in the chat within 2 s of the message that needed it (in the window's language, with
what to do), the status bar no longer says "Ready", a message sent meanwhile waits in the box and goes by itself once
the server is back; Stop and Esc are the user's own doing, never reported as a problem.

The lines the window needs (ui/window/main_window.py) and the health check the runtime runs (app/llm/health_check.py)
are set up here as the window and the runtime do."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.llm.health_check import ModelHealthCheck
from app.runtime.runtime import Runtime
from companions.conversation.readmodel import ConversationReadModel
from companions.llm.health import ModelTrouble
from companions.testing.openai_server import OpenAITestServer, stall_reply
from companions.testing.openai_server.demo_director import DemoDirector
from tests.ui.conftest import started_runtime
from tests.ui.scripted_runtime import until
from ui.window.main_window import MainWindow
from ui.window.model_health import ModelStatus

READY_JA = "準備ができました"  # the window's "Ready"


@contextlib.asynccontextmanager
async def window_on(base_url: str, qtbot: QtBot,
                    monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Runtime, MainWindow, ModelStatus]]:
    """The app, its model at ``base_url`` (Japanese, the test home's language), attached and shown, once the model
    was found and its endpoint learned (nothing of the start is left to meet a server that goes away)."""
    monkeypatch.setenv("MADOI_LLM_BASE_URL", base_url)
    monkeypatch.setenv("MADOI_LLM_MODEL", "demo-model")
    monkeypatch.setenv("MADOI_CONVERSATION_WARM_PROMPTS", "false")  # no warm-up meets the dead server first
    async with started_runtime() as runtime:
        check = ModelHealthCheck(runtime.bus, settings=runtime.loaded, first_interval_s=0.3,
                                 longest_interval_s=0.6)  # the runtime's own, asking more often than every 2 s
        await check.start()
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        status = window.model_health  # the window's own: the status bar widget and the notice's buttons are wired
        window.show()
        await window.attach()
        try:
            assert await runtime.models_resolved() is None
            learning = runtime.parts.models.learning
            if learning is not None:
                await learning
            yield runtime, window, status
        finally:
            window.close()
            await check.stop()


@pytest.mark.slow  # several seconds: ./test runs it in the heavy lane, beside the rest
async def test_a_model_server_that_went_away_is_said_in_the_chat_and_a_message_waits_until_it_is_back(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    director = DemoDirector()
    server = OpenAITestServer(models=["demo-model"], fallback=director)
    await server.start()
    port = server.port
    async with window_on(server.base_url, qtbot, monkeypatch) as (runtime, window, status):
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        notice = window.chat.model_notice
        assert not notice.isVisible()
        await server.stop()  # the model server crashed

        window.chat.input.insertPlainText("みんな、元気？")
        sent = time.monotonic()
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        await until(notice.changed, notice.isVisible, timeout=2.0)
        print(f"notice shown {time.monotonic() - sent:.2f} s after the message was sent")
        assert time.monotonic() - sent < 2.0
        assert notice.text.text() == (
            f"コンパニオンが言語モデルに接続できません（127.0.0.1:{port} で接続が拒否されました）。"
            "モデルのサーバーは動いていますか？戻ったかどうかを Madoi が数秒ごとに確かめています。")
        assert notice.settings_button.text() == "モデルの設定…"
        assert notice.restart_button.isHidden()  # Madoi does not run this model itself
        assert status.isVisible()
        assert status.text() == "言語モデルが応答していません"
        assert window.statusBar().currentMessage() != READY_JA
        window.statusBar().showMessage(READY_JA, 5000)  # as the window says at its start
        assert window.statusBar().currentMessage() == ""

        ended = await talk.wait_for(lambda v: v.status == "ended", timeout=30)
        assert ended.ended_reason == "model-failed"
        await until(window.turns.rendered, lambda: "言語モデルが応答しませんでした" in window.turns.ended.text())
        assert "問題が起きました" not in window.turns.ended.text()

        shown = window.chat.message_count
        window.chat.input.insertPlainText("聞こえる？")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        assert window.chat.holding  # the message waits, and the notice says so
        assert window.chat.input.toPlainText() == "聞こえる？"
        assert notice.waiting.isVisible()
        assert notice.waiting.text() == ("メッセージは入力欄で待っていて、"
                                         "モデルが応答するようになったら自動で送られます。")
        assert window.chat.message_count == shown

        notice.settings_button.click()  # Model settings… opens the Language model tab
        dialog = window.extras.dialog
        assert dialog is not None
        assert dialog.tabs.currentWidget() is dialog.llm
        dialog.close()

        async with OpenAITestServer(models=["demo-model"], port=port, fallback=director):
            back = time.monotonic()
            await until(window.chat.message_shown, lambda: "聞こえる？" in window.chat.view.toPlainText(), timeout=10)
            print(f"the waiting message went {time.monotonic() - back:.2f} s after the server was back")
            assert window.chat.input.toPlainText() == ""
            assert not window.chat.holding
            assert not notice.isVisible()
            assert not status.isVisible()
            await until(window.chat.message_shown, lambda: window.chat.message_count >= shown + 2, timeout=30)
            await runtime.parts.control.stop_conversation()


@pytest.mark.parametrize(("how", "words"), [
    ("stop", "あなたが止めました"),
    ("escape", "あなたが割り込みました。コンパニオンはあなたの発言を待っています"),
])
async def test_stop_and_esc_while_the_model_is_slow_are_said_plainly_not_as_a_problem(
        how: str, words: str, qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with OpenAITestServer(models=["demo-model"], fallback=DemoDirector()) as server, \
            window_on(server.base_url, qtbot, monkeypatch) as (runtime, window, status):
        talk = ConversationReadModel()
        talk.attach(runtime.bus)
        server.script(*(stall_reply(before_headers=True) for _ in range(6)))  # the model thinks, and thinks
        window.chat.input.insertPlainText("ゆっくり考えて")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        await server.wait_for_requests(len(server.chat_requests()) + 1, timeout=10)
        await talk.wait_for(lambda v: v.turn is not None and v.turn.phase == "composing", timeout=10)
        if how == "stop":
            window.turns.stop()
        else:
            qtbot.keyClick(window.chat.input, Qt.Key.Key_Escape)
        ended = await talk.wait_for(lambda v: v.status == "ended", timeout=10)
        assert ended.ended_reason == ("stopped" if how == "stop" else "interrupted")
        await until(window.turns.rendered, lambda: words in window.turns.ended.text())
        assert "問題" not in window.turns.ended.text()
        assert "言語モデル" not in window.turns.ended.text()
        assert not window.chat.model_notice.isVisible()  # the user's own doing: no notice
        assert not status.isVisible()


async def test_a_model_server_that_dies_in_the_middle_of_an_answer_is_said_in_the_chat(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = OpenAITestServer(models=["demo-model"], fallback=DemoDirector())
    await server.start()
    async with window_on(server.base_url, qtbot, monkeypatch) as (runtime, window, status):
        troubles: list[ModelTrouble] = []
        runtime.bus.subscribe("events", lambda item: troubles.append(item) if isinstance(item, ModelTrouble) else None,
                              name="troubles", direct=True)
        notice = window.chat.model_notice
        server.script(*(stall_reply("えっと、") for _ in range(6)))  # it starts answering, then the process dies
        window.chat.input.insertPlainText("ねえ、聞いて")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        await server.wait_for_requests(len(server.chat_requests()) + 1, timeout=10)
        died = time.monotonic()
        await server.stop()
        await until(notice.changed, notice.isVisible, timeout=2.0)
        print(f"notice shown {time.monotonic() - died:.2f} s after the server died")
        assert troubles[0].kind == "crashed"  # then, asked again, nobody is there: it cannot be reached
        assert "の言語モデル" in notice.text.text()
        assert status.isVisible()


async def test_a_stale_url_corrected_in_the_settings_lets_the_waiting_message_go(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        stale = f"http://127.0.0.1:{s.getsockname()[1]}/v1"  # saved once; nothing listens there now
    async with OpenAITestServer(models=["demo-model"], fallback=DemoDirector()) as server, \
            window_on(stale, qtbot, monkeypatch) as (runtime, window, status):
        notice = window.chat.model_notice
        await until(notice.changed, notice.isVisible, timeout=5.0)  # learning the endpoint at the start met nobody
        assert "接続が拒否されました" in notice.text.text()
        window.chat.input.insertPlainText("つながった？")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        assert window.chat.holding

        settings = runtime.settings
        corrected = settings.model_copy(update={"llm": settings.llm.model_copy(update={"base_url": server.base_url})})
        await runtime.apply_settings(corrected)  # the user corrects the URL and saves
        await until(window.chat.message_shown, lambda: "つながった？" in window.chat.view.toPlainText(), timeout=10)
        assert not notice.isVisible()
        assert not status.isVisible()
        await until(window.chat.message_shown, lambda: window.chat.message_count >= 2, timeout=30)  # an answer
        await runtime.parts.control.stop_conversation()
