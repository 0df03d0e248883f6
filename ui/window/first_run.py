"""The first-run panel: shown in the chat area while no language model is configured or reachable.

It explains the two ways to give the companions a voice of their own (a local server, or an API key), shows
why the last connection attempt failed, and offers to open the settings at the Language model tab. It says only
what is true on this machine: whether speech, the camera and search work (the devices' ``DeviceStatus`` on the bus,
followed while the panel lives), and where a key would be kept (the keyring, a private file, or this session).
Addresses and commands never break across lines.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Final, Literal

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from companions.devices.ports import DeviceStatus
from companions.devices.presence import PresenceWatching
from companions.wire.bus import Bus, BusItem
from ui.camera.texts import reason_text as camera_reason_text
from ui.settings.texts import speech_reason_text
from ui.window.bus_bridge import BusFollower
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts, is_language_change, window_language
from ui.window.model_setup import ModelSetupCard
from ui.window.naming import named

KeyPlace = Literal["keyring", "file", "session"]  # app.settings.secrets.SecretStore.where

TEXTS: Final = Texts("first_run", {
    "title": QT_TRANSLATE_NOOP("first_run", "Let's connect a language model"),
    "intro": QT_TRANSLATE_NOOP(
        "first_run", "The companions need a language model to think and talk. Choose one of these and enter it in "
                     "the settings:"),
    "speech.on": QT_TRANSLATE_NOOP("first_run", "Their voices work on this machine."),
    "speech.off": QT_TRANSLATE_NOOP("first_run", "Speech is off on this machine ({reason}): lines are shown only."),
    # what is known without opening it: the device or the video file is there (app/devices/camera.py's check)
    "camera.on": QT_TRANSLATE_NOOP("first_run", "A camera was found ({source}); it is opened only when someone looks."),
    "camera.watching": QT_TRANSLATE_NOOP(
        "first_run", "A camera was found ({source}); it stays open while the companions notice you (the camera switch "
        "in the status bar turns it off)."),
    "camera.device": QT_TRANSLATE_NOOP("first_run", "device {index}"),
    "camera.off": QT_TRANSLATE_NOOP("first_run", "No camera ({reason})."),
    "speak_first": QT_TRANSLATE_NOOP(
        "first_run", "Let them speak first when you have been quiet for {minutes} minutes (Settings › General "
                     "changes how long)"),
    "search.on": QT_TRANSLATE_NOOP("first_run", "Search works."),
    "search.off": QT_TRANSLATE_NOOP("first_run", "Search is not available (the start-up problems say why)."),
    "local.title": QT_TRANSLATE_NOOP("first_run", "A local server — free, private, no key"),
    "local.body": QT_TRANSLATE_NOOP(
        "first_run", "<b>Ollama</b>: install it, run <code>ollama pull qwen2.5:3b</code>; endpoint:<br>"
                     "<code>http://127.0.0.1:11434/v1</code><br><b>LM Studio</b>: load a model and start the local "
                     "server; endpoint:<br><code>http://127.0.0.1:1234/v1</code><br><b>llama.cpp</b>: run "
                     "<code>llama-server -m model.gguf</code>; endpoint:<br><code>http://127.0.0.1:8080/v1</code>"),
    "cloud.title": QT_TRANSLATE_NOOP("first_run", "An API key from an OpenAI-compatible service"),
    "cloud.body": QT_TRANSLATE_NOOP(
        "first_run", "Enter the service's endpoint and your key; OpenAI's endpoint is<br>"
                     "<code>https://api.openai.com/v1</code><br>"),
    "key.keyring": QT_TRANSLATE_NOOP(
        "first_run", "The key is stored in the system keyring, never in the settings file."),
    "key.file": QT_TRANSLATE_NOOP(
        "first_run", "This machine has no system keyring: the key is kept in a file only you can read, never in the "
                     "settings file."),
    "key.session": QT_TRANSLATE_NOOP(
        "first_run", "This machine has no system keyring and the key file cannot be written: the key is kept for this "
                     "session only."),
    "open_settings": QT_TRANSLATE_NOOP("first_run", "Open settings…"),
    "retry": QT_TRANSLATE_NOOP("first_run", "Check again"),
    "problem": QT_TRANSLATE_NOOP("first_run", "Last attempt: {problem}"),
    "not_found": QT_TRANSLATE_NOOP(
        "first_run", "No model server answered on this machine (Ollama, LM Studio, llama.cpp at the addresses "
                     "above). Start one, or enter an endpoint in the settings."),
})



NOT_FOUND = "<not found>"
_CODE = re.compile(r"<code>(.*?)</code>", re.DOTALL)


def unbroken(rich: str) -> str:
    """``rich`` with the spaces of every ``<code>`` (a command) unbreakable. (Qt also breaks a line after "/":
    an address starts a line of its own in the texts, where it fits whole.)"""
    return _CODE.sub(lambda m: f"<code style=\"white-space: nowrap\">{m.group(1)}</code>", rich)
"""A problem of its own: no endpoint configured and no local server answered (said in the user's language)."""


SPEAK_FIRST_MIN: Final = 10  # the silence the card's offer chooses ([conversation] speak_first_after_min)


class FirstRunPanel(QWidget):
    open_settings_requested = Signal()
    retry_requested = Signal()
    speak_first_chosen = Signal(bool)  # the offer to speak first after a silence, ticked or not (by the user)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "firstRunPanel")
        self._problem = ""
        self._devices: dict[str, DeviceStatus] = {}  # "speaker", "camera": what the devices said last
        self._watching = False  # noticing watches through the camera
        self._search: bool | None = None  # whether search started (None: not known yet)
        self._key_place: KeyPlace = "keyring"
        self._bus_link: BusFollower | None = None
        card = named(QFrame(), "firstRunCard")
        card.setMaximumWidth(720)
        card.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.title = named(QLabel(), "firstRunTitle")
        self.title.setWordWrap(True)
        self.model_setup = ModelSetupCard()  # first: talk now, with a model on this computer (ui/window/model_setup.py)
        self.intro = self._paragraph("firstRunIntro")
        self.machine = self._paragraph("firstRunMachine")  # what works on this machine meanwhile
        self.machine.hide()
        self.local_title, self.local_body = self._option("firstRunLocal")
        self.cloud_title, self.cloud_body = self._option("firstRunCloud")
        # Speaking first after a silence: off by default, offered here (companions/conversation/speaking_first.py)
        self.speak_first = named(QCheckBox(), "firstRunSpeakFirst")
        self.speak_first.clicked.connect(self.speak_first_chosen)  # the user's click only, not set_speak_first
        self.problem = self._paragraph("firstRunProblem")
        self.problem.setProperty("result", "error")
        self.problem.hide()
        self.open_button = named(QPushButton(), "openSettingsButton")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.open_settings_requested)
        self.retry_button = named(QPushButton(), "retryButton")
        self.retry_button.clicked.connect(self.retry_requested)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.open_button)
        column = QVBoxLayout(card)
        column.setContentsMargins(28, 24, 28, 24)
        column.setSpacing(10)
        for widget in (self.title, self.model_setup, self.intro, self.local_title, self.local_body, self.cloud_title,
                       self.cloud_body, self.machine, self.speak_first, self.problem):
            column.addWidget(widget)
        column.addSpacing(6)
        column.addLayout(buttons)
        # Wrapped labels only get their right height when the card's width comes from a layout (not from an
        # alignment flag, which sizes it by its hint): stretches either side, the card growing up to its maximum.
        card.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 100)
        row.addStretch(1)
        inner = QWidget()
        centre = QVBoxLayout(inner)
        centre.setContentsMargins(16, 16, 16, 16)
        centre.addStretch(1)
        centre.addLayout(row)
        centre.addStretch(1)
        scroll = self.scroll_area = named(QScrollArea(), "firstRunScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(inner)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.card = card
        # Innermost first: each of these widgets has a layout of its own (see _settle).
        self._nested: tuple[QWidget, ...] = (self.model_setup, card, inner)
        for nested in self._nested:
            nested.installEventFilter(self)
        self._retranslate()

    # -- layout --------------------------------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest and watched in self._nested:
            self._settle()
        return super().eventFilter(watched, event)

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)  # a language change: this panel's words, then every child's, said again
        if is_language_change(event):
            self._settle()  # before the next paint, which Qt may deliver before the layout requests
        return handled

    def _settle(self) -> None:
        """Lays the whole card out at once after a text changed (a language switch, what the machine has, the
        models found, the download offer), the scrolled column sized to the card's new height before anything is
        painted.

        Left to Qt, a label that needs more lines grows its ancestors one event-loop pass at a time: the model setup
        section, the card and the scrolled column each have a layout of their own, and each, when its turn comes,
        lays its children out into its old, smaller size; the scroll area sizes the column last, from heights cached
        before the change. Those in-between layouts were painted (buttons cut to their lower half, paragraphs to
        their first line) for as long as the window was busy, up to a second during a language switch."""
        for nested in self._nested:
            layout = nested.layout()
            if layout is not None:
                layout.activate()  # this one's children get their new sizes; its parent's layout learns them
        QCoreApplication.sendEvent(self.scroll_area, QEvent(QEvent.Type.LayoutRequest))  # the column's height, now

    # -- what this machine has -----------------------------------------------------------------------------------
    def attach(self, bus: Bus, devices: Iterable[DeviceStatus | None], *, search: bool, watching: bool = False) -> None:
        """Says what works now (``devices``: the speaker's and the camera's status, None for one not started;
        ``watching``: noticing watches through the camera) and follows the devices' changes on ``bus`` until
        :meth:`detach`."""
        self._watching = watching
        self.show_machine(devices, search=search)
        if self._bus_link is None:
            self._bus_link = BusFollower(bus, ("events",))
            self._bus_link.follow(self, self._on_item)

    def show_machine(self, devices: Iterable[DeviceStatus | None], *, search: bool) -> None:
        """Says what works now: ``devices`` the speaker's and the camera's status (None: not started), ``search``
        whether search started."""
        for status in devices:
            if status is not None:
                self._devices[status.device] = status
        self._search = search
        self._render_machine()

    def detach(self) -> None:
        if self._bus_link is not None:
            self._bus_link.stop()
            self._bus_link = None

    def set_speak_first(self, on: bool) -> None:
        """Ticks the offer to speak first after a silence as the settings say (``speak_first_after_min`` > 0)."""
        self.speak_first.setChecked(on)

    def set_key_place(self, where: KeyPlace) -> None:
        """Where an API key saved now would be kept (``SecretStore.where``)."""
        self._key_place = where
        self._retranslate()

    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, DeviceStatus) and item.device in ("speaker", "camera"):
            self._devices[item.device] = item
            self._render_machine()
        elif isinstance(item, PresenceWatching):
            self._watching = item.watching
            self._render_machine()

    def machine_text(self) -> str:
        """What works on this machine, as the panel says it (empty before :meth:`attach`)."""
        said = []
        speaker = self._devices.get("speaker")
        if speaker is not None:
            said.append(self._t("speech.on") if speaker.available else
                        self._t("speech.off").format(reason=speech_reason_text(speaker.reason)))
        camera = self._devices.get("camera")
        if camera is not None:
            source = camera.source.strip()
            where = self._t("camera.device").format(index=source) if source.isdigit() else source
            said.append(self._t("camera.watching" if self._watching else "camera.on").format(source=where)
                        if camera.available else
                        self._t("camera.off").format(reason=camera_reason_text(camera.reason)))
        if self._search is not None:
            said.append(self._t("search.on" if self._search else "search.off"))
        return (" " if window_language() == "en" else "").join(said)

    def _render_machine(self) -> None:
        text = self.machine_text()
        self.machine.setText(html.escape(text))
        self.machine.setVisible(bool(text))

    @staticmethod
    def _paragraph(name: str) -> QLabel:
        label = named(QLabel(), name)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # commands can be copied
        return label

    def _option(self, name: str) -> tuple[QLabel, QLabel]:
        title = named(QLabel(), name + "Title")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        title.setWordWrap(True)
        body = self._paragraph(name + "Body")
        body.setContentsMargins(14, 0, 0, 4)
        return title, body

    def _t(self, key: str) -> str:
        return TEXTS.text(key)

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self._retranslate()
        super().changeEvent(event)

    def _retranslate(self) -> None:
        self.title.setText(self._t("title"))
        self.intro.setText(self._t("intro"))
        self.local_title.setText("1. " + self._t("local.title"))
        self.local_body.setText(unbroken(self._t("local.body")))
        self.cloud_title.setText("2. " + self._t("cloud.title"))
        self.cloud_body.setText(unbroken(self._t("cloud.body") + self._t(f"key.{self._key_place}")))
        self.open_button.setText(self._t("open_settings"))
        self.retry_button.setText(self._t("retry"))
        self.speak_first.setText(self._t("speak_first").format(minutes=SPEAK_FIRST_MIN))
        self.set_problem(self._problem)
        self._render_machine()

    def set_problem(self, problem: str | None) -> None:
        """Shows why the model is not reachable (e.g. a failed connection check); ``None``/``""`` hides it.

        :data:`NOT_FOUND` says, in the panel's language, that the search for a local server found nothing."""
        self._problem = problem or ""
        self.problem.setText(html.escape(self.problem_text()))
        self.problem.setVisible(bool(self._problem))

    def problem_text(self) -> str:
        """The problem as the panel says it (plain text; empty when there is none)."""
        if not self._problem:
            return ""
        if self._problem == NOT_FOUND:
            return self._t("not_found")
        return self._t("problem").format(problem=self._problem)
