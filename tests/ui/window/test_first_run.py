"""The first-run panel: shown while no model is configured, in the user's language, leading to the settings."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import keyring.backends.fail
import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from app.llm.connection_check import check_connection, llm_configured
from app.llm.model_files import ModelFile, ModelSource
from app.settings.model import load_settings
from app.settings.secrets import SecretStore
from companions.devices.ports import DeviceStatus
from companions.llm.detect import LOCAL_CANDIDATES, NO_LLM_MESSAGE
from tests.conftest import free_port
from tests.ui.conftest import signal_fired, started_runtime, switch_language
from ui.settings.dialog import SettingsDialog, open_settings
from ui.window.first_run import FirstRunPanel
from ui.window.main_window import MainWindow


def _visible_text(panel: FirstRunPanel) -> str:
    return "\n".join(label.text() for label in (panel.title, panel.intro, panel.local_title, panel.local_body,
                                                   panel.cloud_title, panel.cloud_body))


async def test_the_panel_speaks_the_configured_language_and_switches(qtbot: QtBot, madoi_home: Path) -> None:
    settings = load_settings().settings
    assert settings.general.language == "ja"
    assert not llm_configured(settings)
    switch_language(settings.general.language)
    panel = FirstRunPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert "言語モデル" in panel.title.text()
    assert "Ollama" in panel.local_body.text()
    assert "11434" in panel.local_body.text()
    assert panel.open_button.text() == "設定を開く…"
    switch_language("en")
    assert panel.title.text() == "Let's connect a language model"
    assert "API key" in _visible_text(panel)
    assert not any("\u3040" <= c <= "\u30ff" for c in _visible_text(panel))  # no kana left in English


async def test_a_failed_check_is_explained_and_retry_is_offered(qtbot: QtBot, madoi_home: Path) -> None:
    panel = FirstRunPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.problem.isVisible()
    result = await check_connection(f"http://127.0.0.1:{free_port()}/v1", None, timeout_s=2)
    panel.set_problem(result.error)
    assert panel.problem.isVisible()
    assert "cannot connect" in panel.problem.text()
    async with signal_fired(panel.retry_requested):
        qtbot.mouseClick(panel.retry_button, Qt.MouseButton.LeftButton)
    panel.set_problem(None)
    assert not panel.problem.isVisible()


async def test_open_settings_leads_to_a_configured_model(qtbot: QtBot, madoi_home: Path) -> None:
    loaded = load_settings()
    panel = FirstRunPanel()
    qtbot.addWidget(panel)
    panel.show()
    opened: list[SettingsDialog] = []
    panel.open_settings_requested.connect(lambda: opened.append(open_settings(
        loaded.settings, loaded, parent=panel, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))))
    qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    [dialog] = opened
    assert dialog.isVisible()
    assert not dialog.isModal()  # the companions keep talking behind it
    dialog.base_url.setText("http://127.0.0.1:11434/v1")
    saved: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    dialog.saved.connect(saved.set_result)  # not signal_fired: the dialog deletes itself on close
    dialog.save_button.click()
    await asyncio.wait_for(saved, 5)
    assert llm_configured(load_settings().settings)


async def test_before_a_model_the_window_keeps_the_message_box_and_the_card_agrees_with_itself(
        qtbot: QtBot, madoi_home: Path) -> None:
    """Before: no message box before a model was connected, Ctrl+3 did nothing, the card recommended two models
    and two llama.cpp ports, and a red English "last attempt" showed at the very first start."""
    async with started_runtime() as runtime:
        window = MainWindow(runtime)
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        await window.attach()
        card = window.extras.first_run
        assert card.isVisible()
        assert window.chat.input.isVisible()
        assert window.chat.send_button.isVisible()
        assert not card.problem.isVisible()  # nothing was configured, so nothing failed
        qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
        assert window.focusWidget() is window.chat.input
        window.chat.input.insertPlainText("こんにちは")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        assert window.chat.input.toPlainText() == "こんにちは"  # not lost: nobody could have answered it
        assert window.chat.error.isVisible()
        assert "言語モデルがありません" in window.chat.error.text()
        await runtime.bus.drain()
        assert runtime.parts.conversations.active_id is not None
        assert await runtime.store.messages(runtime.parts.conversations.active_id) == []  # nothing sent into the void
        for language in ("ja", "en"):
            switch_language(language)
            text = card.local_body.text()
            pulled = set(re.findall(r"ollama pull ([\w.:-]+)", text + NO_LLM_MESSAGE))
            assert len(pulled) == 1, pulled  # one model recommended, here and in the core's message
            ports = set(re.findall(r"127\.0\.0\.1:(\d+)", text))
            assert ports == {urlsplit(c.base_url).port and str(urlsplit(c.base_url).port)
                             for c in LOCAL_CANDIDATES}  # the addresses detection knocks on, no other
        window.close()


def _lines(label: QLabel, width: int) -> list[str]:
    """The lines Qt lays ``label``'s rich text out in at ``width`` pixels (its own text layout, not a guess)."""
    document = QTextDocument()
    document.setDefaultFont(label.font())
    document.setHtml(label.text())
    document.setTextWidth(width)
    document.size()  # lays the document out
    lines = []
    block = document.begin()
    while block.isValid():
        layout = block.layout()
        for i in range(layout.lineCount()):
            line = layout.lineAt(i)
            lines.append(block.text()[line.textStart():line.textStart() + line.textLength()])
        block = block.next()
    return lines


async def test_addresses_never_break_across_lines(qtbot: QtBot, madoi_home: Path) -> None:
    panel = FirstRunPanel()
    qtbot.addWidget(panel)
    for language in ("en", "ja"):
        switch_language(language)
        for label in (panel.local_body, panel.cloud_body):
            addresses = re.findall(r"https?://[^\s<]+", label.text())
            assert addresses
            for width in (260, 340, 420, 520):
                lines = _lines(label, width)
                for address in addresses:
                    assert any(address in line for line in lines), (language, width, address, lines)


async def test_the_card_says_what_works_on_this_machine_and_opens_the_model_tab(
        qtbot: QtBot, madoi_home: Path) -> None:
    """Before: the card said camera, voice and search "already work" and that the key goes to the keyring, while
    the camera panel said no camera and the model tab said no keyring; "Open settings…" opened General."""
    async with started_runtime() as runtime:  # no camera (MADOI_CAMERA=none), speech to files, no keyring
        window = MainWindow(runtime, secrets=SecretStore(backend=keyring.backends.fail.Keyring()))
        qtbot.addWidget(window)
        window.show()
        await window.attach()
        card = window.extras.first_run
        assert card.machine.isVisible()
        switch_language("en")
        said = "\n".join(label.text() for label in (card.machine, card.cloud_body))
        assert "Their voices work on this machine." in said
        assert "No camera (turned off in the settings)." in said
        assert "Search works." in said
        assert "no system keyring" in said
        assert "stored in the system keyring" not in said
        assert "already work" not in card.intro.text()
        runtime.bus.publish(DeviceStatus("speaker", False, "no audio device: no output device"))
        await runtime.bus.drain()  # the card follows the devices: speech stopped working
        assert "Speech is off on this machine" in card.machine.text()
        assert "Their voices work" not in card.machine.text()
        card.open_button.click()
        dialog = window.extras.dialog
        assert dialog is not None
        assert dialog.tabs.currentWidget() is dialog.llm
        dialog.reject()
        window.close()


def _cramped(card: QWidget) -> list[str]:
    """What of ``card`` is drawn smaller than it needs, or over another part: a button lower than its size hint, a
    wrapped label lower than its text at its width, two visible parts (of the card, of its model setup section)
    that overlap."""
    found = []
    parts = []
    for widget in card.findChildren(QWidget):
        if not widget.isVisibleTo(card):
            continue
        name = widget.objectName()
        if isinstance(widget, QPushButton) and widget.height() < widget.sizeHint().height():
            found.append(f"{name}: {widget.height()} px high, needs {widget.sizeHint().height()}")
        if isinstance(widget, QLabel) and widget.wordWrap() and widget.height() < widget.heightForWidth(widget.width()):
            found.append(f"{name}: {widget.height()} px high, its text needs {widget.heightForWidth(widget.width())}")
        if widget.parentWidget() in (card, card.findChild(QWidget, "modelSetupCard")) and widget.layout() is None:
            parts.append((name, QRect(widget.mapTo(card, QPoint(0, 0)), widget.size())))
    for i, (name, rect) in enumerate(parts):
        found += [f"{name} {rect.getRect()} overlaps {other} {o.getRect()}" for other, o in parts[i + 1:]
                  if rect.intersects(o)]
    return found


class _Paints(QObject):
    """What was cramped each time the card was painted."""

    def __init__(self, card: QWidget) -> None:
        super().__init__()
        self.card = card
        self.count = 0
        self.cramped: list[list[str]] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
            if cramped := _cramped(self.card):
                self.cramped.append(cramped)
        return False


@pytest.mark.parametrize("size", [(520, 420), (640, 560), (720, 900)])
async def test_nothing_of_the_card_is_ever_drawn_squashed_or_overlapped(
        qtbot: QtBot, qapp: QApplication, madoi_home: Path, size: tuple[int, int]) -> None:
    """Before: after a language switch (and, under load, after any text that needed more lines) the card was
    painted laid out into its old height for a while: "Talk with this model" and "Choose a file…" cut to their lower
    half, paragraphs to their first line. Each widget with a layout of its own (the model setup section, the card,
    the scrolled column) grew one event-loop pass after the other, the scroll area last."""
    switch_language("en")
    panel = FirstRunPanel()
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    paints = _Paints(panel.card)
    panel.card.installEventFilter(paints)
    files = [ModelFile(Path(f"/home/someone/.lmstudio/models/lmstudio-community/Qwen2.5-{n}B-Instruct-GGUF/"
                            f"qwen2.5-{n}b-instruct-q4_k_m.gguf"), f"qwen2.5-{n}b-instruct-q4_k_m",
                       n * 700_000_000, ModelSource.LM_STUDIO) for n in (1, 3, 7)]
    steps: dict[str, Callable[[], object]] = {
        "machine": lambda: panel.show_machine(
            (DeviceStatus("speaker", True), DeviceStatus("camera", True, source="/tmp/a/rather/long/path/cam.avi")),
            search=True),
        "ja": lambda: switch_language("ja"),
        "files": lambda: panel.model_setup.show_files(files),
        "problem": lambda: panel.set_problem("cannot connect to http://127.0.0.1:11434/v1 (ConnectError)"),
        "en": lambda: switch_language("en"),
        "no files": lambda: panel.model_setup.show_files([]),
    }
    for step, change in steps.items():
        paints.count = 0
        change()
        for _ in range(20):
            qapp.processEvents()
        assert paints.count > 0, step  # it was drawn, and checked each time
        assert paints.cramped == [], (step, paints.cramped[0])
        assert _cramped(panel.card) == [], step
        column = panel.scroll_area.widget()
        assert column is not None
        assert column.height() >= column.heightForWidth(column.width()), step
        taller = column.height() > panel.scroll_area.viewport().height()
        assert (panel.scroll_area.verticalScrollBar().maximum() > 0) == taller, step  # it scrolls when it must
    if size == (520, 420):
        assert panel.scroll_area.verticalScrollBar().maximum() > 0  # the card is taller than the panel there
