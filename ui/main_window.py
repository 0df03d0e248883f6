"""The main window: roster, chat, turn-taking, search and camera panels; layout remembered between runs."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QLabel, QListWidget, QMainWindow, QSplitter, QTabWidget, QWidget

from app.error_reporting import ErrorReporter
from app.runtime import Runtime
from app.secrets import SecretStore
from app.settings import VoiceSettings
from companions.bus import BusItem
from companions.protocol import Message
from ui.bus_bridge import BusSignals
from ui.chat_panel import ChatPanel
from ui.desktop_extras import DesktopExtras
from ui.naming import named


def _placeholder(text: str, name: str) -> QLabel:
    label = named(QLabel(text), name)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setEnabled(False)
    return label


class MainWindow(QMainWindow):
    closed = Signal()

    def __init__(self, runtime: Runtime, *, reporter: ErrorReporter | None = None,
                 secrets: SecretStore | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runtime = runtime
        self.setWindowTitle("Madoi — 円居")
        self.setMinimumSize(720, 480)
        self.roster = named(QListWidget(), "roster")
        self.chat = ChatPanel()
        self.side = named(QTabWidget(), "sidePanels")
        self.side.addTab(_placeholder(self.tr("Turn-taking: who wants the floor"), "turnsPlaceholder"),
                         self.tr("Turns"))
        self.side.addTab(_placeholder(self.tr("Search: not available yet"), "searchPlaceholder"),
                         self.tr("Search"))
        self.side.addTab(_placeholder(self.tr("Camera: no preview yet"), "cameraPlaceholder"),
                         self.tr("Camera"))
        self.splitter = named(QSplitter(Qt.Orientation.Horizontal), "mainSplitter")
        self.splitter.addWidget(self.roster)
        self.extras = DesktopExtras(self, runtime.settings, runtime.paths, reporter=reporter, secrets=secrets,
                                    test_voice=self._test_voice)
        self.splitter.addWidget(self.extras.wrap_chat(self.chat))
        self.splitter.addWidget(self.side)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([180, 560, 320])
        self.setCentralWidget(self.splitter)
        self.statusBar().showMessage(self.tr("Starting…"))
        self._layout_store = QSettings(str(runtime.paths.config_dir / "window.ini"), QSettings.Format.IniFormat)
        self._restore_layout()
        self._signals: BusSignals | None = None
        self.chat.send_requested.connect(self._send)

    async def attach(self) -> None:
        """Shows the stored conversation, then follows the bus. Call after the runtime started."""
        conversation = self.runtime.conversation_id
        if conversation is not None:
            for stored in await self.runtime.store.messages(conversation, limit=500):
                self.chat.add_message(stored.message)
        self._signals = BusSignals(self.runtime.bus, ("messages",), self)
        self._signals.item.connect(self._on_item)
        self.statusBar().showMessage(self.tr("Ready"), 5000)

    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, Message):
            self.chat.add_message(item)

    async def _test_voice(self, voice: VoiceSettings, sentence: str) -> None:
        if self.runtime.devices is None:
            raise RuntimeError(self.tr("the speaker has not started yet"))
        await self.runtime.devices.test_voice(voice, sentence)

    def _send(self, text: str) -> None:
        self.runtime.send_user_message(text)

    def _restore_layout(self) -> None:
        geometry = self._layout_store.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1100, 700)
        splitter = self._layout_store.value("splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)

    def save_layout(self) -> None:
        self._layout_store.setValue("geometry", self.saveGeometry())
        self._layout_store.setValue("splitter", self.splitter.saveState())
        self._layout_store.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        if self._signals is not None:
            self._signals.close()
        self.closed.emit()
        super().closeEvent(event)


def run_until_closed(window: MainWindow) -> asyncio.Future[None]:
    """A future that completes when ``window`` is closed."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def finish() -> None:
        if not future.done():
            future.set_result(None)

    window.closed.connect(finish)
    return future
