"""The companion editor in the window, on the real runtime: a companion added, edited and removed is in the roster
and the conversation at once; an imported character card brings its picture; a card that would run a program is
asked about in the window before it runs; CEL is checked as typed."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from companions.llm.scripted import ScriptedCast, say
from companions.wire.protocol import Message
from tests.ui.conftest import signal_fired
from tests.ui.scripted_runtime import EVENT_PARAMS, lines, scripted_runtime, until
from tests.waiting import wait_until
from ui.cards.editor import CompanionEditor
from ui.roster.model import NAME_ROLE
from ui.window.main_window import MainWindow

PICTURE_COLOUR = "#20a060"


def _cast(*extra: str) -> ScriptedCast:
    cast = ScriptedCast("akari", "hina", "souta", *extra)
    for name, model in cast.items():
        if name in EVENT_PARAMS:
            model.lane("event_params").always(json.dumps(EVENT_PARAMS[name]))
    return cast


def _roster_names(window: MainWindow) -> list[str]:
    model = window.roster.model
    return [str(model.index(i).data(NAME_ROLE)) for i in range(model.rowCount())]


async def _window(qtbot: QtBot, runtime: object) -> MainWindow:
    window = MainWindow(runtime)  # type: ignore[arg-type]
    qtbot.addWidget(window)
    await window.attach()
    window.show()
    return window


async def test_a_companion_added_in_the_editor_talks_then_changes_and_leaves(qtbot: QtBot, madoi_home: Path) -> None:
    cast = _cast("kumo")
    lines(cast["kumo"], say("はじめまして、クモです。"))
    async with scripted_runtime(cast) as runtime:
        window = await _window(qtbot, runtime)
        editor = window.companions_desk.open_editor()
        assert [editor.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(editor.list.count())] == [
            "akari", "hina", "souta"]
        qtbot.mouseClick(editor.companions.add_button, Qt.MouseButton.LeftButton)
        editor.identity.name.setText("Kumo")
        assert editor.identity.card_id.text() == "kumo"  # derived from the name while new
        editor.identity.personality.setPlainText("のんびりした雲。")
        editor.identity.samples.setPlainText("ふわふわ〜")
        editor.looks.set_colour("#123456")
        assert not editor.may_search.isChecked()
        editor.may_search.setChecked(True)  # it may search the user's knowledge folders
        assert editor.save_button.isEnabled()
        async with signal_fired(editor.saved):
            qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        await until(window.roster.model.modelReset, lambda: "Kumo" in _roster_names(window))
        assert (madoi_home / "companions" / "kumo.yaml").is_file()
        assert "kumo" in runtime.parts.conversation_manager.present
        assert window.roster.model.index(3).data(Qt.ItemDataRole.DecorationRole) is not None
        assert "search" in runtime.parts.cast.companions["kumo"].tools  # its knowledge: the user's folders

        message = Message.create(from_="user", message="クモ、こんにちは", to=["kumo"])
        async with signal_fired(window.chat.message_shown, timeout=15):
            runtime.bus.publish(message)
        await until(window.chat.message_shown, lambda: "はじめまして、クモです。" in window.chat.view.toPlainText(),
                    timeout=15)
        cast["kumo"].assert_used_up()

        editor.list.setCurrentRow(3)
        assert editor.identity.card_id.isReadOnly()  # the id stays once saved
        editor.identity.name.setText("Kumomo")
        async with signal_fired(editor.saved):
            qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        await until(window.roster.model.modelReset, lambda: "Kumomo" in _roster_names(window))
        assert runtime.parts.cast.companions["kumo"].name == "Kumomo"
        assert runtime.parts.cast.companions["kumo"].card.colour == "#123456"

        editor.list.setCurrentRow(3)
        assert editor.companions.remove_button.isEnabled()
        qtbot.mouseClick(editor.companions.remove_button, Qt.MouseButton.LeftButton)
        await until(window.roster.model.modelReset, lambda: "Kumomo" not in _roster_names(window))
        # the conversation hears of the cast's change on its own path: the roster may show it first
        await wait_until(lambda: "kumo" not in runtime.parts.conversation_manager.present)
        assert not (madoi_home / "companions" / "kumo.yaml").exists()
        editor.list.setCurrentRow(0)
        assert not editor.companions.remove_button.isEnabled()  # a sample is edited and restored, never removed
        window.close()


def _character_png(path: Path) -> Path:
    image = QImage(120, 160, QImage.Format.Format_RGB32)
    image.fill(QColor(PICTURE_COLOUR))
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Seraphina", "description": "{{char}} guards the glade.", "personality": "Gentle.",
        "first_mes": "Welcome, {{user}}.", "tags": ["fantasy"]}}
    image.setText("chara", base64.b64encode(json.dumps(card).encode()).decode())
    assert image.save(str(path), "PNG")
    return path


async def test_an_imported_card_brings_its_picture_to_the_roster_and_its_kept_fields_are_shown(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path) -> None:
    async with scripted_runtime(_cast("seraphina", "seraphina-2")) as runtime:
        window = await _window(qtbot, runtime)
        editor = window.companions_desk.open_editor()
        result = await editor.import_card(_character_png(tmp_path / "seraphina.png"))
        assert result is not None
        await until(window.roster.model.modelReset, lambda: "Seraphina" in _roster_names(window))
        assert editor.current_id == "seraphina"
        assert "tags" in editor.trust.kept.text()
        assert "Imported" in editor.note.text() or "joined" in editor.note.text() or "V2 PNG" in editor.note.text()
        icon = window.roster.model.index(3).data(Qt.ItemDataRole.DecorationRole)
        image = icon.pixmap(32, 32).toImage()
        assert image.pixelColor(16, 16).name() == PICTURE_COLOUR  # its picture, not a letter circle
        again = await editor.import_card(tmp_path / "seraphina.png")  # the same name again: beside it
        assert again is not None
        assert again.card.id == "seraphina-2"
        window.close()


async def test_a_card_that_would_run_a_program_is_asked_about_in_the_window_first(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    folder = madoi_home / "companions"
    folder.mkdir(parents=True)
    (folder / "kumo.yaml").write_text(f'metadata: {{id: kumo, name: Kumo}}\nrole: A cloud.\n'
                                      f'mcp: [{{name: notes, command: sh, args: [-c, "touch {ran}"]}}]\n',
                                      encoding="utf-8")
    async with scripted_runtime(_cast("kumo")) as runtime:
        window = await _window(qtbot, runtime)
        prompt = window.companions_desk.prompt
        assert prompt is not None
        assert prompt.isVisible()
        box = prompt.cards["kumo"]
        held_lines = next(w for w in box.children() if w.objectName() == "heldLines")
        assert f"sh -c 'touch {ran}'" in held_lines.text()  # the exact command line
        assert "'notes'" in held_lines.text()
        assert not ran.exists()
        approve = next(w for w in box.children() if w.objectName() == "approveCardButton")
        qtbot.mouseClick(approve, Qt.MouseButton.LeftButton)
        await until(window.roster.model.dataChanged, lambda: runtime.parts.cast.held == {}, timeout=15)
        assert ran.exists()  # approved: it runs, without a restart
        assert [a.card for a in runtime.settings.trust.cards] == ["kumo"]
        assert "[[trust.cards]]" in (madoi_home / "settings.toml").read_text(encoding="utf-8")
        window.close()


async def test_an_events_expression_is_checked_as_it_is_typed(qtbot: QtBot, madoi_home: Path) -> None:
    async with scripted_runtime(_cast()) as runtime:
        window = await _window(qtbot, runtime)
        editor: CompanionEditor = window.companions_desk.open_editor()
        editor.list.setCurrentRow(0)  # akari: its card's three conditions
        assert [row.expression.text() for row in editor.events.rows] == [
            "already_replied == false", "wants_to_see == true", "need_response == true"]
        row = editor.events.rows[0]
        row.expression.setText("already_replied ==")
        assert "Syntax error" in row.check.text()  # the parser's own words, in the interface's sentence
        assert not editor.save_button.isEnabled()
        row.expression.setText("already_replied == true")
        assert row.check.text() == "正しい CEL です"  # (the tests run in Japanese)
        assert editor.save_button.isEnabled()
        window.close()


async def test_a_character_card_dropped_on_the_window_joins(qtbot: QtBot, madoi_home: Path, tmp_path: Path) -> None:
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    async with scripted_runtime(_cast("seraphina")) as runtime:
        window = await _window(qtbot, runtime)
        data = QMimeData()
        data.setUrls([QUrl.fromLocalFile(str(_character_png(tmp_path / "seraphina.png")))])
        drop = QDropEvent(QPointF(400, 300), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
                          Qt.KeyboardModifier.NoModifier)
        # Qt delivers a drop only from a real drag (none under the offscreen platform): the window's filter is
        # handed the event as Qt would hand it.
        assert window.acceptDrops()
        assert window.companions_desk.eventFilter(window, drop)
        assert drop.isAccepted()
        await until(window.roster.model.modelReset, lambda: "Seraphina" in _roster_names(window))
        editor = window.companions_desk.editor
        assert editor is not None
        assert editor.isVisible()
        # The card folder's watcher may bring her into the cast (the roster) before the import selects her in the
        # editor (a full run under load saw the editor still on Akari at that moment).
        await wait_until(lambda: editor.current_id == "seraphina")
        window.close()


async def test_a_duplicate_keeps_the_words_and_events_under_its_own_id(qtbot: QtBot, madoi_home: Path) -> None:
    async with scripted_runtime(_cast("akari-copy")) as runtime:
        window = await _window(qtbot, runtime)
        editor = window.companions_desk.open_editor()
        editor.list.setCurrentRow(0)  # akari
        qtbot.mouseClick(editor.companions.duplicate_button, Qt.MouseButton.LeftButton)
        assert editor.identity.name.text() == "あかり（コピー）"
        assert not editor.identity.card_id.isReadOnly()
        editor.identity.card_id.setText("akari-copy")
        async with signal_fired(editor.saved):
            qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        await until(window.roster.model.modelReset, lambda: "akari-copy" in runtime.parts.cast.companions)
        akari, copy = runtime.parts.cast.companions["akari"].card, runtime.parts.cast.companions["akari-copy"].card
        assert copy.metadata.personality == akari.metadata.personality
        assert copy.events.conditions == akari.events.conditions
        assert copy.actions == akari.actions
        assert akari.name("ja") == "あかり"  # the original stays as it was
        window.close()


async def test_saving_a_sample_unchanged_writes_the_same_card_and_restore_brings_it_back(
        qtbot: QtBot, madoi_home: Path) -> None:
    from companions.cards.card import load_cards, sample_cards_dir

    samples = load_cards([sample_cards_dir()]).by_id()
    async with scripted_runtime(_cast()) as runtime:
        window = await _window(qtbot, runtime)
        editor = window.companions_desk.open_editor()
        for row, companion_id in enumerate(("akari", "hina", "souta")):
            editor.list.setCurrentRow(row)
            assert await editor.save_current() == companion_id
            written = load_cards([madoi_home / "companions"]).by_id()[companion_id]
            assert written == samples[companion_id]  # nothing lost or changed by the editor
        editor.list.setCurrentRow(1)
        assert editor.restore_button.isVisibleTo(editor)
        editor.identity.name.setText("ヒナ")
        await editor.save_current()
        assert runtime.parts.cast.companions["hina"].name == "ヒナ"
        editor.list.setCurrentRow(1)
        await editor.remove_current()  # "Restore sample"
        assert runtime.parts.cast.companions["hina"].name == "ひな"
        assert not (madoi_home / "companions" / "hina.yaml").exists()
        window.close()


async def test_a_card_copied_into_the_folder_while_running_joins_and_is_asked_about(
        qtbot: QtBot, madoi_home: Path, tmp_path: Path) -> None:
    async with scripted_runtime(_cast("kumo")) as runtime:
        window = await _window(qtbot, runtime)
        editor = window.companions_desk.open_editor()
        editor.list.setCurrentRow(0)
        editor.identity.personality.setPlainText("typing, not saved yet")
        (madoi_home / "companions" / "kumo.yaml").write_text(
            f'metadata: {{id: kumo, name: Kumo}}\nrole: A cloud.\n'
            f'mcp: [{{name: notes, command: sh, args: [-c, "touch {tmp_path / "ran"}"]}}]\n', encoding="utf-8")
        await until(window.roster.model.modelReset, lambda: "Kumo" in _roster_names(window), timeout=15)
        prompt = window.companions_desk.prompt
        assert prompt is not None
        assert "kumo" in prompt.cards
        assert editor.identity.personality.toPlainText() == "typing, not saved yet"  # the form was left alone
        assert not (tmp_path / "ran").exists()
        window.close()


async def test_the_model_and_the_voice_are_tested_from_the_editor(
        qtbot: QtBot, madoi_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from companions.testing.openai_server import OpenAITestServer, text_reply

    async with OpenAITestServer(models=["qwen-small"]) as server:
        monkeypatch.setenv("MADOI_LLM_BASE_URL", server.base_url)
        server.script(text_reply("はい。"))
        async with scripted_runtime(_cast()) as runtime:
            window = await _window(qtbot, runtime)
            editor = window.companions_desk.open_editor()
            editor.list.setCurrentRow(1)  # hina
            editor.model_choice.combo.setEditText("qwen-small")
            check = await editor.test_model()
            assert check is not None
            assert check.ok, check
            assert editor.model_choice.result.property("result") == "ok"
            assert "qwen-small" in editor.model_choice.result.text()
            assert [r.body.get("model") for r in server.chat_requests()] == ["qwen-small"]
            ok, message = await editor.test_voice()
            assert ok, message
            assert any((madoi_home / "speech").glob("*.wav"))  # said through the app's speaker
            window.close()
        server.assert_used_up()
