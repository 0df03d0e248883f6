"""The window asks before anything from outside uses the camera, the voice, files or tools: the consent bar on the
real trust policy, refusals said in a notification, the Turns panel's refused calls, and the Privacy tab."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from app.trust.policy import Consent
from companions.tools.tool_use import ToolUsed
from companions.trust.policy import (
    DOCUMENTS,
    IMPORTED,
    Capability,
    ConsentAsker,
    ConsentRefused,
    ConsentRelay,
    ConsentRequest,
    Relation,
    Source,
    TrustDecision,
    TrustPolicy,
)
from companions.wire.bus import InProcessBus
from tests.ui.conftest import signal_fired, switch_language
from tests.ui.fakes import FakePeople
from ui.settings.dialog import SettingsDialog
from ui.trust.consent_prompt import ConsentPrompt, RefusalNotes, question_text
from ui.turns.tool_uses import ToolUsesView

SOUTA = Source("souta", Relation.GUEST, "Souta", "network:12D3KooWAbCdEfGhIjKlMn")
KUMO = Source("kumo", Relation.GUEST, "Kumo", "bridge")


HOLDERS: list[QWidget] = []  # qtbot keeps weak references only


def prompt(qtbot: QtBot, language: str = "en") -> ConsentPrompt:
    """The bar at the top of a panel, as the window places it in the chat."""
    holder = QWidget()
    QVBoxLayout(holder)
    switch_language(language)
    bar = ConsentPrompt()
    bar.place_in(holder)
    qtbot.addWidget(holder)
    holder.show()
    HOLDERS[:] = [holder]
    return bar


async def test_the_bar_names_who_where_and_what_and_always_is_remembered(qtbot: QtBot) -> None:
    bar = prompt(qtbot)
    policy = TrustPolicy(asker=bar)
    assert bar.isHidden()
    async with signal_fired(bar.asked):
        asking = asyncio.ensure_future(policy.permit(SOUTA, Capability.CAMERA, "vision"))
    assert bar.isVisible()
    assert bar.question.text() == "Souta on 12D3Ko…IjKlMn wants to look through your camera."
    assert [b.text() for b in (bar.once, bar.always, bar.never)] == ["Allow once", "Always", "Never"]
    qtbot.mouseClick(bar.always, Qt.MouseButton.LeftButton)
    assert (await asking).allowed
    assert bar.isHidden()
    assert [(d.source, d.capability, d.decision) for d in policy.decisions] == [
        ("souta@network:12D3KooWAbCdEfGhIjKlMn", Capability.CAMERA, "always")]
    assert (await policy.permit(SOUTA, Capability.CAMERA)).allowed  # not asked again
    assert bar.isHidden()


async def test_never_once_and_waiting_questions_in_japanese(qtbot: QtBot) -> None:
    bar = prompt(qtbot, "ja")
    policy = TrustPolicy(asker=bar)
    async with signal_fired(bar.asked):
        camera = asyncio.ensure_future(policy.permit(KUMO, Capability.CAMERA))
    async with signal_fired(bar.queue_changed):
        voice = asyncio.ensure_future(policy.permit(KUMO, Capability.VOICE))
    assert bar.question.text() == "Kumo（ブリッジ経由）があなたのカメラを見ようとしています。"
    assert bar.waiting.text() == "ほかに 1 件の確認が待っています"
    async with signal_fired(bar.asked):
        qtbot.mouseClick(bar.never, Qt.MouseButton.LeftButton)
    assert not (await camera).allowed
    assert bar.question.text() == "Kumo（ブリッジ経由）があなたのスピーカーで話そうとしています。"
    assert bar.waiting.text() == ""
    qtbot.mouseClick(bar.once, Qt.MouseButton.LeftButton)
    assert (await voice).allowed
    assert [(d.capability, d.decision) for d in policy.decisions] == [(Capability.CAMERA, "never")]


async def test_a_turn_holding_an_imported_conversation_is_asked_about_by_that_name(qtbot: QtBot) -> None:
    bar = prompt(qtbot, "ja")
    policy = TrustPolicy(asker=bar)
    async with signal_fired(bar.asked):
        camera = asyncio.ensure_future(policy.permit(IMPORTED, Capability.CAMERA, "vision"))
    assert bar.question.text() == "取り込んだ会話（コンパニオンのプロンプト内）があなたのカメラを見ようとしています。"
    qtbot.mouseClick(bar.never, Qt.MouseButton.LeftButton)
    assert not (await camera).allowed


async def test_no_answer_in_time_takes_the_question_away_and_a_note_says_it(qtbot: QtBot) -> None:
    bus = InProcessBus()
    bar = prompt(qtbot)
    notes: list[tuple[str, str, str]] = []
    noted = asyncio.Event()

    def note(*args: str) -> None:
        notes.append(args)  # type: ignore[arg-type]
        noted.set()

    refusals = RefusalNotes(bus, note)
    refusals.attach()
    policy = TrustPolicy(asker=bar, bus=bus, ask_timeout_s=0.2)
    async with signal_fired(bar.asked):
        asking = asyncio.ensure_future(policy.permit(SOUTA, Capability.FILES, "search"))
    permission = await asking
    assert not permission.allowed
    assert bar.isHidden()
    await asyncio.wait_for(noted.wait(), 5)
    assert notes == [("Not allowed", "Souta on 12D3Ko…IjKlMn may not search your files.", permission.reason)]
    noted.clear()
    for _ in range(20):  # a flood of refusals of the same kind is one note a minute
        bus.publish(ConsentRefused(SOUTA, Capability.FILES, "again"))
    bus.publish(ConsentRefused(SOUTA, Capability.CAMERA, "another kind"))  # delivered after the flood
    await asyncio.wait_for(noted.wait(), 5)
    assert [text for _title, text, _why in notes] == [
        "Souta on 12D3Ko…IjKlMn may not search your files.", "Souta on 12D3Ko…IjKlMn may not look through your camera."]
    refusals.detach()
    await policy.aclose()
    await bus.aclose()


async def test_the_window_going_away_refuses_what_is_still_asked(qtbot: QtBot) -> None:
    bar = prompt(qtbot)
    relay = ConsentRelay()
    policy = TrustPolicy(asker=relay)

    class Port:
        def use_asker(self, asker: ConsentAsker | None) -> None:
            relay.connect(asker)

    bar.attach(Port())
    async with signal_fired(bar.asked):
        asking = asyncio.ensure_future(policy.permit(SOUTA, Capability.CAMERA))
    bar.detach()
    permission = await asking
    assert not permission.allowed
    assert "dismissed" in permission.reason
    later = await policy.permit(SOUTA, Capability.CAMERA)  # nobody is asked any more
    assert later.reason == "Not allowed: Souta may not look through your camera (nobody is at the window to ask)."


async def test_a_refused_tool_call_is_said_in_the_turns_panels_tools_used(qtbot: QtBot) -> None:
    bus = InProcessBus()
    view = ToolUsesView(bus, FakePeople(names={"akari": "Akari"}))
    qtbot.addWidget(view)
    view.attach()
    async with signal_fired(view.changed):
        bus.publish(ToolUsed.of("akari", "t1", "vision", origin="built-in", arguments="{}", is_error=True,
                                refused=True, result="Not allowed: Souta may not look through your camera "
                                                     "(the user said no)."))
    assert view.lines() == ["Akari · the camera (built-in) was not run: Not allowed: Souta may not look through "
                            "your camera (the user said no)."]
    switch_language("ja")
    view.detach()
    await bus.aclose()


async def test_the_privacy_tab_lists_answers_and_forgets_one_on_save(qtbot: QtBot, madoi_home: Path) -> None:
    loaded = load_settings()
    consent = Consent(loaded, InProcessBus())
    consent.policy.remember(SOUTA, Capability.CAMERA, "always")  # answered in the window: saved at once
    consent.policy.remember(KUMO, Capability.VOICE, "never")
    switch_language("en")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.tabs.setCurrentWidget(dialog.privacy)
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Privacy"
    rows = [[dialog.privacy.decisions.topLevelItem(i).text(c) for c in range(3)]
            for i in range(dialog.privacy.decisions.topLevelItemCount())]
    assert rows == [["Souta (souta@network:12D3KooWAbCdEfGhIjKlMn)", "Look through the camera", "Allowed"],
                    ["Kumo (kumo@bridge)", "Speak through the speakers", "Refused"]]
    consent.policy.remember(Source("hana", Relation.GUEST, "Hana", "bridge"), Capability.FILES, "always")
    dialog.tabs.setCurrentIndex(0)
    dialog.tabs.setCurrentWidget(dialog.privacy)  # shown again: the answer given meanwhile is there
    assert dialog.privacy.decisions.topLevelItemCount() == 3
    dialog.privacy.decisions.setCurrentItem(dialog.privacy.decisions.topLevelItem(0))
    qtbot.mouseClick(dialog.privacy.forget_button, Qt.MouseButton.LeftButton)
    assert dialog.privacy.decisions.topLevelItemCount() == 2
    async with signal_fired(dialog.saved):
        dialog.save_button.click()
    saved = tomllib.loads(loaded.paths.settings_file.read_text(encoding="utf-8"))["trust"]["decisions"]
    assert [(d["source"], d["capability"], d["decision"]) for d in saved] == [
        ("kumo@bridge", "voice", "never"), ("hana@bridge", "files", "always")]
    assert [TrustDecision.model_validate(d).source for d in saved] == [
        d.source for d in load_settings().settings.trust.decisions]


async def test_the_privacy_tab_says_when_nothing_is_remembered(qtbot: QtBot, madoi_home: Path) -> None:
    loaded = load_settings()
    switch_language("ja")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.tabs.setCurrentWidget(dialog.privacy)
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "プライバシー"
    assert dialog.privacy.empty.isVisible()
    assert dialog.privacy.empty.text() == "まだ何も記憶していません。"
    assert not dialog.privacy.forget_button.isEnabled()


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "Akari wants to look through your camera, and what it was told holds words from your documents in your "
           "knowledge folders."),
    ("ja", "あかりがあなたのカメラを見ようとしています。"
           "あかりが聞いた中に、あなたの文書（ナレッジフォルダ内）の言葉があります。"),
])
def test_a_question_for_words_in_a_companions_prompt_names_the_companion_and_where_the_words_came_from(
        qapp: object, language: str, expected: str) -> None:
    switch_language(language)
    companion = "Akari" if language == "en" else "あかり"
    request = ConsentRequest(DOCUMENTS, Capability.CAMERA, "vision", held_by=companion)
    assert question_text(request, language) == expected


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "Akari's line holds what your camera saw. Send it to Souta on 12D3Ko…IjKlMn? If not, it stays in this "
           "window."),
    ("ja", "あかりの発言には、カメラで見たことが入っています。Souta（12D3Ko…IjKlMn 上）に送りますか？"
           "送らなければ、この画面の中だけに残ります。"),
])
def test_before_a_private_line_leaves_the_question_says_whose_line_what_it_holds_and_where_it_would_go(
        qapp: object, language: str, expected: str) -> None:
    switch_language(language)
    peer = Source("peer", Relation.OTHER, "Souta", "network:12D3KooWAbCdEfGhIjKlMn")  # a peer, by its companions
    request = ConsentRequest(peer, Capability.SHARE_CAMERA, held_by="Akari" if language == "en" else "あかり")
    assert question_text(request, language) == expected


async def test_the_privacy_tab_lists_a_page_allowed_lines_that_hold_what_the_camera_saw(
        qtbot: QtBot, madoi_home: Path) -> None:
    loaded = load_settings()
    consent = Consent(loaded, InProcessBus())
    page = Source("http://localhost:5173", Relation.OTHER, "http://localhost:5173", "bridge")
    consent.policy.remember(page, Capability.SHARE_CAMERA, "always")
    switch_language("en")
    dialog = SettingsDialog(loaded.settings, loaded, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.tabs.setCurrentWidget(dialog.privacy)
    rows = [[dialog.privacy.decisions.topLevelItem(i).text(c) for c in range(3)]
            for i in range(dialog.privacy.decisions.topLevelItemCount())]
    assert rows == [["http://localhost:5173 (http://localhost:5173@bridge)", "Get lines that hold what the camera saw",
                     "Allowed"]]
