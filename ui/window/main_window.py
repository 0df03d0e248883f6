"""The main window: roster and conversations, chat, and the turn-taking, search and camera panels.

Each panel follows the runtime's bus itself; the window only lays them out, attaches them once the runtime started,
detaches them when it closes, and remembers the layout between runs. Keyboard: Ctrl+1..6 go to the roster, the
conversations, the message box, the turn-taking, search and camera panels; F6 / Shift+F6 cycle through the areas.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final, Protocol
from urllib.parse import urlsplit

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QSplitter, QTabWidget, QWidget

from app.cards.checks import CompanionChecks
from app.cards.editing import RuntimeCompanionEditing
from app.conversations.greetings import greet_new_conversation
from app.devices.camera_controls import RuntimeCamera
from app.llm.connection_check import llm_configured
from app.memory.access import RuntimeMemory
from app.runtime.error_reporting import ErrorReporter
from app.runtime.panels import (
    RuntimeConsent,
    RuntimeControl,
    RuntimeDevices,
    RuntimeHistory,
    RuntimeModelSetup,
    RuntimePeople,
    RuntimeRemoteCompanions,
    RuntimeSearch,
)
from app.runtime.runtime import Runtime
from app.settings.model import Settings, VoiceSettings
from app.settings.secrets import SecretStore
from app.voice_input.controls import RuntimeVoiceInput
from companions.common.tasks import TaskSet
from ui.camera.preview import CameraPreview
from ui.camera.switch import CameraSwitch
from ui.cards.desk import CompanionsDesk
from ui.chat.conversation_list import ConversationList
from ui.chat.looks import ChatLooks
from ui.chat.message_actions import MessageActions
from ui.chat.panel import ChatPanel
from ui.chat.show_them import ShowThemButton
from ui.memory.view import MemoryEntry
from ui.roster.network_panel import NetworkPanel
from ui.roster.roster import RosterPanel
from ui.search.panel import SearchPanel
from ui.trust.consent_prompt import ConsentPrompt, RefusalNotes
from ui.trust.refused_origins import RefusedOrigins
from ui.turns.panel import TurnsPanel
from ui.voice.microphone_switch import MicrophoneSwitch
from ui.voice.speech_notice import SpeechNotice
from ui.voice.spoken_words import SpokenWords
from ui.voice.talk_button import TalkButton
from ui.window.desktop_extras import DesktopExtras
from ui.window.first_run import NOT_FOUND
from ui.window.i18n import QT_TRANSLATE_NOOP, Numerus, Texts, is_language_change, use_language, window_language
from ui.window.layout import WindowLayout
from ui.window.menu import ConversationMenu
from ui.window.model_health import ModelStatus
from ui.window.model_setup import ModelStatusNotice
from ui.window.naming import named

_TEXTS: Final = Texts("main_window", {
    "title": QT_TRANSLATE_NOOP("main_window", "Madoi — 円居"),
    "tab.turns": QT_TRANSLATE_NOOP("main_window", "&Turns"),
    "tab.search": QT_TRANSLATE_NOOP("main_window", "Searc&h"),
    "tab.camera": QT_TRANSLATE_NOOP("main_window", "&Camera"),
    "starting": QT_TRANSLATE_NOOP("main_window", "Starting…"),
    "ready": QT_TRANSLATE_NOOP("main_window", "Ready"),
    "connected.title": QT_TRANSLATE_NOOP("main_window", "The companions can talk"),
    "connected.own": QT_TRANSLATE_NOOP("main_window", "They talk with {model}, run on this computer."),
    "connected.server": QT_TRANSLATE_NOOP("main_window", "They talk with {model} at {host}."),
    "failed.title": QT_TRANSLATE_NOOP("main_window", "Could not apply the settings"),
    "still.title": QT_TRANSLATE_NOOP("main_window", "Still no language model"),
    "problems.title": Numerus.translate("main_window", "Madoi started with %n problems", None, 0),
    "problems.more": QT_TRANSLATE_NOOP("main_window", " (and {n} more: see the details)"),
    "bridge.busy": QT_TRANSLATE_NOOP(
        "main_window", "Other programs can't connect to Madoi right now: port {port} is in use (perhaps Madoi is "
                       "already open). You can choose another port in Settings > Bridge."),
})
SIDE_TABS: Final = ("turns", "search", "camera")


class Panel(Protocol):
    """What the window needs of a side panel: follow the bus after start, stop following before the runtime stops."""

    def detach(self) -> None: ...


def _text(key: str, language: str | None = None) -> str:
    return _TEXTS.text(key, language)


class MainWindow(QMainWindow):
    closed = Signal()

    def __init__(self, runtime: Runtime, *, reporter: ErrorReporter | None = None,
                 secrets: SecretStore | None = None, parent: QWidget | None = None) -> None:
        use_language(runtime.settings.general.language)  # the application's: every widget built here follows it
        super().__init__(parent)
        self.runtime = runtime
        self.setMinimumSize(760, 520)
        # Each panel gets the read models it shows and the commands it gives (ui/window/panel_ports.py), never the
        # runtime.
        bus, people, control, history = runtime.bus, RuntimePeople(runtime), RuntimeControl(runtime), \
            RuntimeHistory(runtime)
        devices = RuntimeDevices(runtime)
        self.roster = RosterPanel(bus, control, people, RuntimeRemoteCompanions(runtime))
        self.network = NetworkPanel(bus, devices.network, people)  # where each companion runs
        self.conversations = ConversationList(bus, history)
        self.conversations.new_requested.connect(self._focus_message_box)  # New or Ctrl+N: the user types next
        self.conversations.started_new.connect(self._greet)  # a companion may open it with its first greeting
        self.chat = ChatPanel(bus, history, people)
        self.turns = TurnsPanel(bus, control, people)
        self.search_panel = SearchPanel(bus, RuntimeSearch(runtime), people)
        self.camera_panel = CameraPreview(bus, devices.camera, people)
        self.side = named(QTabWidget(), "sidePanels")
        for panel in (self.turns, self.search_panel, self.camera_panel):
            self.side.addTab(panel, "")

        self.left = named(QSplitter(Qt.Orientation.Vertical), "leftSplitter")
        self.left.addWidget(self.roster)
        self.left.addWidget(self.network)
        self.left.addWidget(self.conversations)
        self.left.setSizes([300, 120, 260])
        self.extras = DesktopExtras(self, runtime.settings, runtime.loaded, reporter=reporter, secrets=secrets,
                                    test_voice=self._test_voice, companions=CompanionChecks.for_runtime(runtime))
        self.extras.settings_saved.connect(self._settings_saved)
        self.companions_desk = CompanionsDesk(self, RuntimeCompanionEditing(runtime, self.extras.saved_elsewhere),
                                              bus, self.extras.settings_action)  # the editor
        self.memory_entry = MemoryEntry(self, RuntimeMemory(runtime), people,
                                        self.extras.settings_action)  # the Memory view
        self.extras.first_run.retry_requested.connect(self._retry_model)
        self.extras.first_run.model_setup.model_chosen.connect(self._model_file_chosen)  # "Talk now"
        self._greet_when_connected = False
        self.splitter = named(QSplitter(Qt.Orientation.Horizontal), "mainSplitter")
        self.splitter.addWidget(self.left)
        self.splitter.addWidget(self.extras.wrap_chat(self.chat))
        self.consent_prompt = ConsentPrompt()  # asks before anything from outside uses the camera...
        self.consent_prompt.place_in(self.chat)
        self.refusal_notes = RefusalNotes(bus, self._note_refusal, parent=self)
        self.message_actions = MessageActions(self.chat, bus, control, history, people=people)  # Stop, copy a message
        self.splitter.addWidget(self.side)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([220, 560, 420])
        for index in range(self.splitter.count()):
            self.splitter.setCollapsible(index, False)  # keyboard users cannot drag a collapsed panel back
        self.splitter.setContentsMargins(8, 6, 8, 0)
        self.setCentralWidget(self.splitter)
        self._retranslate()
        self.speech_notice = SpeechNotice(bus, devices.speaker_status)
        self.statusBar().addPermanentWidget(self.speech_notice)
        camera = RuntimeCamera(runtime)  # the camera switch, the looks in the chat and "Show them"
        self.camera_switch = CameraSwitch(bus, camera)
        self.statusBar().addPermanentWidget(self.camera_switch)
        self.chat_looks = ChatLooks(self.chat, people)
        self.show_them = ShowThemButton(self.chat, camera)
        self.show_them.place()
        voice_input = RuntimeVoiceInput(runtime)  # talking to them: the microphone's switch and state,
        self.microphone_switch = MicrophoneSwitch(bus, voice_input)  # push-to-talk, words in the box
        self.statusBar().addPermanentWidget(self.microphone_switch)
        self.microphone_switch.offer_with(self.extras.notifications.notify, self.extras.open_speech_model_download)
        self.talk_button = TalkButton(self.chat, bus, voice_input)
        self.talk_button.place()
        self.spoken_words = SpokenWords(self.chat, bus, voice_input)
        self.refused_origins = RefusedOrigins(bus, self.extras.notifications,  # pages the bridge refused
                                              owner=self.extras, store=runtime.loaded)
        self.statusBar().showMessage(_text("starting"))
        self.model_status = ModelStatusNotice(self.statusBar(), self.extras.notifications)  # the model Madoi runs
        self.model_health = ModelStatus(bus, self.statusBar())  # a model that does not answer: no "Ready" meanwhile
        self.statusBar().addPermanentWidget(self.model_health)
        self.chat.model_notice.settings_requested.connect(self.extras.open_model_settings)
        self.chat.model_notice.restart_requested.connect(self._restart_model)
        self.chat.model_notice.set_own_model(self._runs_own_model)
        self._install_shortcuts()
        self.conversation_menu = ConversationMenu(self, {
            "new": self.conversations.new_conversation, "interrupt": self._interrupt, "stop": self._stop,
            "quit": self.close})
        self.window_layout = WindowLayout(self, runtime.paths.config_dir / "window.ini",
                                          {"splitter": self.splitter, "left": self.left}, self.side)
        self.window_layout.restore()
        self._attached: list[Panel] = []
        self._tasks = TaskSet("window")

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def attach(self) -> None:
        """Shows the stored conversation, then every panel follows the bus. Call after the runtime started."""
        self.chat.history_loaded.connect(self._history_loaded)
        await self.chat.attach()
        self._attached.append(self.chat)
        await self.conversations.attach()
        self._attached.append(self.conversations)
        for panel in (self.roster, self.network, self.turns, self.search_panel, self.camera_panel, self.speech_notice,
                      self.message_actions, self.camera_switch, self.chat_looks, self.microphone_switch,
                      self.talk_button, self.spoken_words, self.model_health):
            panel.attach()
            self._attached.append(panel)
        self._attached.append(self.show_them)  # follows nothing; its task in flight is cancelled at detach
        self.companions_desk.attach()  # faces, and the cards waiting for the user's approval
        self._attached.append(self.companions_desk)
        self.consent_prompt.attach(RuntimeConsent(self.runtime))
        self.refusal_notes.attach()
        self.refused_origins.attach()
        self._attached.append(self.refused_origins)
        self._attached += [self.consent_prompt, self.refusal_notes]
        devices = RuntimeDevices(self.runtime)  # the first-run card says what works on this machine meanwhile
        camera = devices.camera()
        self.extras.first_run.attach(self.runtime.bus, (devices.speaker_status(), camera.status if camera else None),
                                     search=RuntimeSearch(self.runtime).service() is not None,
                                     watching=self.camera_switch.port.watching())
        self._attached.append(self.extras.first_run)
        model_setup = RuntimeModelSetup(self.runtime)
        self.extras.first_run.model_setup.attach(model_setup)
        self.model_status.attach(model_setup)
        self._attached += [self.extras.first_run.model_setup, self.model_status]
        self.extras.filler_notice.attach(self.runtime.bus, RuntimePeople(self.runtime).user_id())
        self._attached.append(self.extras.filler_notice)
        if self.runtime.model_pending:  # probed, or loaded, after the start: the first-run card follows it then
            self._tasks.spawn(self._when_model_found(), name="model-found")
        else:
            self._show_model_problem(self.runtime.model_problem(), first=True)
        self._report_start_problems()
        self.statusBar().showMessage(_text("ready"), 5000)

    async def _when_model_found(self) -> None:
        """The first-run card follows the default model once it is found (or known missing)."""
        self._show_model_problem(await self.runtime.models_resolved(), first=True)

    def _report_start_problems(self) -> None:
        """What went wrong at start (a broken card or settings key, search or the bridge not available) is said
        once, in a notification with every problem in its details; the parts that work run on."""
        problems = list(self.runtime.loaded.problems)
        details = list(problems)
        bridge = self.runtime.parts.bridge if self.runtime.started else None
        if bridge is not None and bridge.error:  # said to a newcomer who never heard of a bridge; the error in details
            problems.append(_text("bridge.busy").format(port=self.runtime.settings.bridge.port))
            details.append(bridge.error)
        if not problems:
            return
        text = problems[0]
        if len(problems) > 1:
            text += _text("problems.more").format(n=len(problems) - 1)
        self.extras.notifications.notify(_TEXTS.text("problems.title", n=len(problems)), text,
                                         "warning", details="\n".join(details))

    def _note_refusal(self, title: str, text: str, details: str) -> None:
        self.extras.notifications.notify(title, text, "warning", details=details)

    def detach(self) -> None:
        """Every panel stops following the bus (before the runtime stops); safe to call twice."""
        self._tasks.cancel()
        while self._attached:
            self._attached.pop().detach()

    # -- language, keyboard ----------------------------------------------------------------------------------
    def _retranslate(self) -> None:
        self.setWindowTitle(_text("title"))
        for index, key in enumerate(SIDE_TABS):
            self.side.setTabText(index, _text(f"tab.{key}"))

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self._retranslate()
            # What has words but is no widget (Qt tells only widgets; an event() override on each would route
            # every event they get through Python): the menus, the Stop button's owner.
            for helper in (self.extras, self.conversation_menu, self.companions_desk, self.memory_entry,
                           self.message_actions):
                helper.retranslate()
        super().changeEvent(event)

    def _settings_saved(self, settings: Settings) -> None:
        if settings.general.language != window_language():
            use_language(settings.general.language)  # Qt tells every widget: each says its words again
        self._tasks.spawn(self._apply(settings), name="apply-settings")
        self.talk_button.follow_settings()  # the push-to-talk key may have changed

    def _model_file_chosen(self, settings: Settings) -> None:
        """A model file chosen on the first-run card (saved): the window applies it as after Save, and once the
        model answers the companions greet."""
        self._greet_when_connected = True
        self.extras.saved_elsewhere(settings)

    def _retry_model(self) -> None:
        self._tasks.spawn(self._apply(None), name="reconnect-model")

    def _restart_model(self) -> None:
        self._tasks.spawn(RuntimeModelSetup(self.runtime).restart(), name="restart-model")

    def _runs_own_model(self) -> bool:
        """Whether Madoi runs the companions' model itself (the chat's notice then offers to restart it)."""
        return RuntimeModelSetup(self.runtime).status() is not None

    async def _apply(self, settings: Settings | None) -> None:
        """The runtime takes new settings (or looks for a model again); the first-run panel follows the result."""
        had_problem = self.runtime.model_problem() is not None
        try:
            if settings is not None:
                await self.runtime.apply_settings(settings)
            else:
                await self.runtime.reconnect_models()
        except Exception as err:  # the user sees why; the window and the conversation go on
            self.extras.notifications.notify(_text("failed.title"), str(err), "error")
            return
        problem = self.runtime.model_problem()
        self._show_model_problem(problem)
        if had_problem and problem is None and self.runtime.started:
            resolution = self.runtime.parts.models.resolution
            self.extras.notifications.notify(_text("connected.title"), self._connected_text(), "info",
                                             details=resolution.message)
            if self._greet_when_connected:
                self._greet()
        elif problem is not None and settings is None:  # "retry" was pressed: say it was tried
            self.extras.notifications.notify(_text("still.title"),
                                             self.extras.first_run.problem_text(), "warning")
        self._greet_when_connected = False

    def _connected_text(self) -> str:
        """The model the companions talk with, in words: its name (a model file's name, not its path in some cache)
        and where it runs; the resolution's own message, paths and all, goes to the details."""
        llm = self.runtime.settings.llm
        if llm.base_url is None and llm.model_file is not None:
            return _text("connected.own").format(model=Path(llm.model_file).stem)
        model = self.runtime.parts.models.resolution.model
        if model is None:
            return ""
        return _text("connected.server").format(model=Path(model.name).stem or model.name,
                                                host=urlsplit(model.base_url).netloc)

    def _show_model_problem(self, problem: str | None, *, first: bool = False) -> None:
        # What the runtime resolved decides, not the settings alone: a local server found on this machine (or a
        # companion's own endpoint) lets the companions talk although no endpoint was ever typed in.
        shown = problem
        if problem is not None and not llm_configured(self.runtime.settings):
            # Nothing was ever configured: at the first start that is no failure to show in red; after "Check
            # again" the card says, in the user's language, that no local server answered.
            shown = None if first else NOT_FOUND
        self.extras.show_first_run(problem is not None, shown)

    def _install_shortcuts(self) -> None:
        # Slots are bound methods, never lambdas capturing self (a reference cycle through Qt:
        # ui/window/main_thread_gc.py).
        targets: list[tuple[str, QWidget, int | None]] = [
            ("Ctrl+1", self.roster.list, None),
            ("Ctrl+2", self.conversations.items, None),
            ("Ctrl+3", self.chat.input, None),
            *((f"Ctrl+{4 + i}", self.side, i) for i in range(len(SIDE_TABS))),
        ]
        self._shortcut_targets: dict[QShortcut, tuple[QWidget, int | None]] = {}
        for keys, widget, tab in targets:
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(self._on_area_shortcut)
            self._shortcut_targets[shortcut] = (widget, tab)
        QShortcut(QKeySequence(Qt.Key.Key_F6), self).activated.connect(self._next_area)
        QShortcut(QKeySequence("Shift+F6"), self).activated.connect(self._previous_area)

    def _history_loaded(self) -> None:
        """The Turns panel says that the conversation shown can be continued (not "no conversation yet")."""
        self.turns.set_stored_messages(self.chat.message_count)

    def _focus_message_box(self) -> None:
        self.focus_area(self.chat.input)

    def _greet(self) -> None:
        """The user started a new conversation: the companion chosen in To (or the only one here) opens it with its
        card's first greeting (app/conversations/greetings.py)."""
        self._tasks.spawn(greet_new_conversation(self.runtime, self.chat.address.addressees()), name="greeting")

    def _interrupt(self) -> None:
        self.turns.interrupt()

    def _stop(self) -> None:
        self.turns.stop()

    def _on_area_shortcut(self) -> None:
        target = self._shortcut_targets.get(self.sender())  # type: ignore[call-overload]
        if target is not None:
            self.focus_area(*target)

    def _next_area(self) -> None:
        self.cycle_focus(1)

    def _previous_area(self) -> None:
        self.cycle_focus(-1)

    def focus_area(self, widget: QWidget, tab: int | None = None) -> None:
        if tab is not None:
            self.side.setCurrentIndex(tab)
            panel = self.side.currentWidget()
            # A panel with nothing to type into or pick (a placeholder): the tab bar, whose arrows switch panels.
            widget = panel.focusProxy() or _first_focusable(panel) or self.side.tabBar()
        widget.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _areas(self) -> list[QWidget]:
        return [self.roster.list, self.conversations.items, self.chat.input, self.side]

    def cycle_focus(self, step: int) -> None:
        """F6: the next area (roster, conversations, message box, side panels), as in most desktop programs."""
        areas = self._areas()
        focused = self.focusWidget()
        current = next((i for i, area in enumerate(areas)
                        if focused is not None and (focused is area or area.isAncestorOf(focused))), -1)
        self.focus_area(areas[(current + step) % len(areas)])

    # -- devices ---------------------------------------------------------------------------------------------
    async def _test_voice(self, voice: VoiceSettings, sentence: str) -> None:
        if not self.runtime.started:
            raise RuntimeError("the speaker has not started yet")
        await self.runtime.parts.devices.test_voice(voice, sentence)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.window_layout.save()
        self.detach()
        self.closed.emit()
        super().closeEvent(event)


def _first_focusable(widget: QWidget) -> QWidget | None:
    """The first child that takes keyboard focus (a panel's query box, its table...), in tab order."""
    if widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
        return widget
    for child in widget.findChildren(QWidget):
        if child.isVisibleTo(widget) and child.isEnabled() and child.focusPolicy() & Qt.FocusPolicy.TabFocus:
            return child
    return None


def run_until_closed(window: MainWindow) -> asyncio.Future[None]:
    """A future that completes when ``window`` is closed."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def finish() -> None:
        if not future.done():
            future.set_result(None)

    window.closed.connect(finish)
    return future
