"""The chat's notice of a model in trouble, on its own: the words for each kind in English, the buttons, one notice for
several endpoints, and what a refused request (the model is there) does not do: hold the user's message."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from companions.llm.health import ModelBack, ModelTrouble
from ui.chat.model_notice import ModelNotice, trouble_text

LOCAL = "http://127.0.0.1:8080/v1"


def test_each_kind_is_said_in_plain_words_with_where_and_what_to_do() -> None:
    def said(kind: str, cause: str = "") -> str:
        return trouble_text(ModelTrouble(LOCAL, kind, "detail", cause), "en")  # type: ignore[arg-type]

    assert said("unreachable", "connection-refused") == (
        "The companions can't reach their language model (connection refused at 127.0.0.1:8080). Is the model "
        "server running? Madoi checks every few seconds whether it is back.")
    assert said("unreachable", "unknown-host").startswith(
        "The companions can't reach their language model: the address 127.0.0.1:8080 is not known.")
    assert "stopped in the middle of an answer" in said("crashed", "connection-lost")
    assert "did not answer in time" in said("timed-out")
    assert said("refused") == ("The language model at 127.0.0.1:8080 refused the companions' request. Check the model "
                               "name and the API key in the model settings.")  # it is there: no checking


def test_the_buttons_and_one_notice_for_several_endpoints(qtbot: QtBot) -> None:
    notice = ModelNotice()
    qtbot.addWidget(notice)
    assert notice.isHidden()
    notice.set_own_model(lambda: True)
    notice.follow(ModelTrouble(LOCAL, "crashed", "gone", "connection-lost"))
    notice.follow(ModelTrouble("http://10.0.0.2:11434/v1", "unreachable", "refused", "connection-refused"))
    assert not notice.isHidden()
    assert "10.0.0.2:11434" in notice.text.text()  # the latest
    assert notice.text.toolTip() == "refused"
    assert notice.down
    assert not notice.restart_button.isHidden()  # Madoi runs the model: it can restart it
    with qtbot.waitSignal(notice.settings_requested, timeout=1000):
        notice.settings_button.click()
    with qtbot.waitSignal(notice.restart_requested, timeout=1000):
        notice.restart_button.click()
    notice.follow(ModelBack("http://10.0.0.2:11434/v1"))
    assert "127.0.0.1:8080" in notice.text.text()  # one still in trouble
    notice.follow(ModelBack(LOCAL))
    assert notice.isHidden()
    assert not notice.down


def test_a_refused_request_is_said_but_the_model_is_not_down(qtbot: QtBot) -> None:
    notice = ModelNotice()
    qtbot.addWidget(notice)
    notice.follow(ModelTrouble(LOCAL, "refused", "HTTP 401", ""))
    assert not notice.isHidden()
    assert not notice.down  # a message sent now goes (and may be refused again): nothing waits for a return
    assert notice.restart_button.isHidden()
