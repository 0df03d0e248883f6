"""The Camera and voice tab's voice engines: the VOICEVOX-compatible engines found (VOICEVOX and AivisSpeech on
this computer, and the addresses the user gives), each with its voices and a test button.

The list is looked for when the tab is first shown and on "Look again" (app/devices/voicevox_discovery.py, in the
background). An engine's voices are then offered to each companion (Companions tab, companion editor) as
"VOICEVOX ずんだもん (ノーマル)"; the test says a sentence in the voice chosen in the list (else the engine's first)
straight through that engine. An engine's names are shown as plain text, never as rich text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.devices.voicevox_discovery import EngineSearch, FoundEngine, find_engines, say_sample
from companions.common.languages import Language
from ui.settings.form import Spawn, show_result, voice_test
from ui.window.i18n import QT_TRANSLATE_NOOP, Numerus, Texts
from ui.window.naming import named

TEXTS: Final = Texts("voice_engines", {
    "title": QT_TRANSLATE_NOOP("voice_engines", "Voice engines (VOICEVOX, AivisSpeech)"),
    "find_local": QT_TRANSLATE_NOOP("voice_engines", "Look for VOICEVOX and AivisSpeech on this computer"),
    "urls": QT_TRANSLATE_NOOP("voice_engines", "Other engines' addresses"),
    "urls.hint": QT_TRANSLATE_NOOP(
        "voice_engines", "e.g. http://192.168.1.20:50021, separated by commas. An engine on another computer is "
                         "used only when its address is given here."),
    "search": QT_TRANSLATE_NOOP("voice_engines", "Look again"),
    "searching": QT_TRANSLATE_NOOP("voice_engines", "Looking for voice engines…"),
    "found": Numerus.translate("voice_engines", "%n engines found", None, 0),
    "none": QT_TRANSLATE_NOOP(
        "voice_engines", "No engine found. Start VOICEVOX or AivisSpeech, then look again; meanwhile Japanese "
                         "lines are said by Open JTalk."),
    "column.voice": QT_TRANSLATE_NOOP("voice_engines", "Engine and voices"),
    "column.id": QT_TRANSLATE_NOOP("voice_engines", "Style id"),
    "engine": QT_TRANSLATE_NOOP("voice_engines", "{engine} at {url}"),
    "voices": Numerus.translate("voice_engines", "%n voices", None, 0),
    "not_answering": QT_TRANSLATE_NOOP("voice_engines", "does not answer: {problem}"),
    "test": QT_TRANSLATE_NOOP("voice_engines", "Test"),
    "hint": QT_TRANSLATE_NOOP(
        "voice_engines", "Each companion's voice is chosen in the Companions tab, among these voices too."),
})

SAMPLE: Final = "こんにちは。円居の声のテストです。"  # the engines speak Japanese, whatever the window's language
Finder = Callable[[Sequence[str], bool], Awaitable[EngineSearch]]  # (given URLs, find local) -> search
Sampler = Callable[[FoundEngine, int, str, float], Awaitable[None]]  # (engine, style id, sentence, volume)


async def _find(urls: Sequence[str], find_local: bool) -> EngineSearch:
    return await find_engines(urls, find_local=find_local)


def split_urls(value: str) -> list[str]:
    return [u.strip() for u in value.replace("\n", ",").split(",") if u.strip()]


class VoiceEnginesBox(QWidget):
    """The engines found, their voices, a test per engine; ``urls`` and ``find_local`` are the settings'."""

    searched = Signal(object)  # the EngineSearch shown
    tested = Signal(bool, str)  # heard, message

    def __init__(self, urls: Sequence[str], find_local: bool, *, language: Language, spawn: Spawn,
                 volume: Callable[[], float] = lambda: 1.0, finder: Finder | None = None,
                 sampler: Sampler | None = None) -> None:
        super().__init__()
        named(self, "voiceEngines")
        self.language = language
        self._spawn = spawn
        self._volume = volume
        self._finder = finder or _find
        self._sampler = sampler or say_sample
        self._searched_once = False
        self.search_result = EngineSearch()
        self.find_local = named(QCheckBox(self.t("find_local")), "findLocalEnginesCheck")
        self.find_local.setChecked(find_local)
        self.urls = named(QLineEdit(", ".join(urls)), "engineUrlsEdit")
        self.urls.setPlaceholderText("http://192.168.1.20:50021")
        self.urls.setToolTip(self.t("urls.hint"))
        self.search_button = named(QPushButton(self.t("search")), "searchEnginesButton")
        self.search_button.clicked.connect(self.search)
        self.status = named(QLabel(""), "enginesStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.tree = named(QTreeWidget(), "enginesTree")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels([self.t("column.voice"), self.t("column.id"), ""])
        self.tree.header().setStretchLastSection(False)  # the test buttons keep their own size
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setMinimumHeight(150)
        self.result = named(QLabel(""), "engineTestResult")
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        self.result.setWordWrap(True)
        self.test_buttons: dict[str, QPushButton] = {}  # by engine URL
        hint = named(QLabel(self.t("hint")), "fieldHint")
        urls_row = QWidget()
        row = QHBoxLayout(urls_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel(self.t("urls")))
        row.addWidget(self.urls, 1)
        row.addWidget(self.search_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.find_local)
        layout.addWidget(urls_row)
        layout.addWidget(self.status)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.result)
        layout.addWidget(hint)

    def t(self, key: str, **values: object) -> str:
        return TEXTS.text(key, self.language, **values)

    def given_urls(self) -> list[str]:
        return split_urls(self.urls.text())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._searched_once:  # the first look is when the tab is seen: probing costs nothing before
            self.search()

    def search(self) -> None:
        self._searched_once = True
        self._spawn(self._search())

    async def _search(self) -> None:
        await self.run_search()

    async def run_search(self) -> EngineSearch:
        self.search_button.setEnabled(False)
        show_result(self.status, "busy", self.t("searching"))
        try:
            found = await self._finder(self.given_urls(), self.find_local.isChecked())
        finally:
            self.search_button.setEnabled(True)
        self.show_engines(found)
        return found

    def show_engines(self, found: EngineSearch) -> None:
        self.search_result = found
        self.tree.clear()
        self.test_buttons.clear()
        usable = found.usable
        if usable:
            show_result(self.status, "ok", self.t("found", n=len(usable)))
        else:
            show_result(self.status, "error", self.t("none"))
        for engine in found.engines:
            title = self.t("engine", engine=f"{engine.name} {engine.version}".strip(), url=engine.base_url)
            top = QTreeWidgetItem([title, "", ""])
            top.setData(0, Qt.ItemDataRole.UserRole, engine.base_url)
            self.tree.addTopLevelItem(top)
            if not engine.usable:
                top.setText(1, self.t("not_answering", problem=engine.problem))
                continue
            top.setText(1, self.t("voices", n=len(engine.styles)))
            for style in engine.styles:
                child = QTreeWidgetItem([f"{style.speaker} ({style.name})", str(style.id), ""])
                child.setData(0, Qt.ItemDataRole.UserRole, style.id)
                top.addChild(child)
            button = named(QPushButton(self.t("test")), "testEngineButton")
            button.setProperty("engine", engine.base_url)
            button.clicked.connect(lambda _=False, e=engine: self.test(e))
            self.tree.setItemWidget(top, 2, button)
            self.test_buttons[engine.base_url] = button
            top.setExpanded(len(found.usable) == 1)
        self.searched.emit(found)

    def chosen_style(self, engine: FoundEngine) -> int:
        """The style chosen in the list under ``engine``, else its first."""
        item = self.tree.currentItem()
        parent = item.parent() if item is not None else None
        if item is not None and parent is not None and parent.data(0, Qt.ItemDataRole.UserRole) == engine.base_url:
            return int(item.data(0, Qt.ItemDataRole.UserRole))
        return engine.styles[0].id

    def test(self, engine: FoundEngine) -> None:
        self._spawn(self._test(engine))

    async def _test(self, engine: FoundEngine) -> None:
        await self.run_test(engine)

    async def run_test(self, engine: FoundEngine) -> tuple[bool, str]:
        style = self.chosen_style(engine)
        voice = next((f"{engine.name} {s.speaker} ({s.name})" for s in engine.styles if s.id == style), engine.name)
        heard, message = await voice_test(self._sampler(engine, style, SAMPLE, self._volume()),
                                          self.test_buttons.get(engine.base_url), self.result, self.language,
                                          voice=voice)
        self.tested.emit(heard, message)
        return heard, message
