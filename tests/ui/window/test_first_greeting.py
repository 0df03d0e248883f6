"""A card's first greeting opens a new conversation, as a SillyTavern user expects (app/conversations/greetings.py): the
companion chosen in To (or the only one with a greeting among those here) says it as its own line, aloud, with no model
request; the user answers it, and the companion's next line knows it said it. A real started runtime with scripted
models (a model request the script does not expect fails the test) and speech rendered by espeak-ng to files."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.conversations.greetings import greet_new_conversation, greeter
from companions.llm.scripted import ScriptedCast, call, mentions, reply_json
from tests.ui.conftest import signal_fired
from tests.ui.open_window import open_window
from tests.ui.scripted_runtime import COMPANIONS, EVENT_PARAMS, lines, scripted_runtime, until

GREETING = "やあ、雲のクモだよ。今日はどんな空だった？"


def _kumo(home: Path, greeting: str = GREETING, card_id: str = "kumo", name: str = "クモ") -> None:
    folder = home / "companions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{card_id}.yaml").write_text(
        f"metadata: {{id: {card_id}, name: {name}, personality: のんびり, story: 空の雲, sample: ふわふわだね。}}\n"
        f"role: A drifting cloud who likes to chat.\ngreeting: {greeting}\n", encoding="utf-8")


def _cast(*extra: str) -> ScriptedCast:
    cast = ScriptedCast(*COMPANIONS, *extra)
    for name in COMPANIONS:
        cast[name].lane("event_params").always(reply_json(EVENT_PARAMS[name]))
        cast[name].lane("vote").always(reply_json({"state": "listen", "importance": 1, "reason": ""}))
    return cast


async def test_a_new_conversation_opens_with_the_greeting_of_the_companion_chosen_in_to(
        qtbot: QtBot, madoi_home: Path) -> None:
    _kumo(madoi_home)
    cast = _cast("kumo")
    lines(cast["kumo"], call("speak", {"message": "晴れてたんだね、いいなあ。"}, expect=mentions(GREETING)))
    async with scripted_runtime(cast) as runtime:
        window = await open_window(qtbot, runtime)
        window.chat.address.set_addressees(["kumo"])
        lit: list[tuple[str, bool]] = []
        window.chat.speaking_changed.connect(lambda key, on: lit.append((key, on)))
        async with signal_fired(window.chat.speaking_changed, timeout=30):  # said aloud (the bubble lights up)
            qtbot.mouseClick(window.conversations.new_button, Qt.MouseButton.LeftButton)
        conversation = runtime.parts.conversations.active_id
        assert conversation is not None
        [said] = [s.message for s in await runtime.store.messages(conversation)]
        assert (said.params.from_, said.params.message, said.params.to) == ("kumo", GREETING, ["user"])
        [bubble] = window.chat.view.bubbles()
        assert bubble.header.startswith("クモ")
        assert bubble.text == GREETING
        # its bubble lit up as it was said (seen when it happened: a short greeting may be said by now, under load)
        assert lit[0] == (said.params.id, True)
        assert cast["kumo"].requests == []  # no model was asked for it
        await until(window.chat.speaking_changed, lambda: window.chat.speaking_message("kumo") is None, 30)
        assert list((madoi_home / "speech").rglob("*.wav"))  # espeak-ng said it

        # The user answers; Kumo's next line is asked of its model with its greeting in what it heard.
        async with signal_fired(window.chat.message_shown):
            runtime.parts.conversations.send("晴れてたよ！", ["kumo"])
        await until(window.chat.message_shown, lambda: "いいなあ" in window.chat.view.toPlainText(), 20)
        assert len(await runtime.store.messages(conversation)) == 3
        cast.assert_used_up()
        window.close()


async def test_with_everyone_here_the_only_companion_with_a_greeting_opens_and_two_leave_it_to_the_user(
        madoi_home: Path) -> None:
    async with scripted_runtime(_cast()) as runtime:
        said = await greet_new_conversation(runtime, [])  # To: everyone; of the sample cast only Akari has one
        assert said is not None
        assert (said.params.from_, said.params.message) == ("akari", "やっほー、あかりだよ！ 今日はどんな一日だった？")
        assert await greet_new_conversation(runtime, ["akari"]) is None  # said already: not twice, not after words
    _kumo(madoi_home)
    async with scripted_runtime(_cast("kumo")) as runtime:
        await runtime.parts.conversations.new()
        assert await greet_new_conversation(runtime, []) is None  # two greetings (Akari's, Kumo's): the user first
        assert await greet_new_conversation(runtime, ["hina"]) is None  # chosen, and has none
        said = await greet_new_conversation(runtime, ["kumo"])
        assert said is not None
        assert (said.params.from_, said.params.message) == ("kumo", GREETING)


def test_who_greets() -> None:
    here = {"akari", "hina", "kumo"}
    greetings = {"kumo": "やあ"}
    assert greeter(here, ["kumo"], greetings) == "kumo"
    assert greeter(here, ["akari"], greetings) is None
    assert greeter(here, [], greetings) == "kumo"
    assert greeter(here, ["akari", "kumo"], greetings) == "kumo"
    assert greeter(here, [], {"kumo": "やあ", "hina": "はーい"}) is None
    assert greeter({"kumo"}, [], greetings) == "kumo"
    assert greeter(here - {"kumo"}, ["kumo"], greetings) is None  # not here (muted, left)
