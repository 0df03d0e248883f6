"""The window asks the user before anything from outside uses the camera, the voice, the user's files or tools.

:class:`ConsentPrompt` is the window's side of the core's :class:`~companions.trust.policy.ConsentAsker` port: a bar
above the chat that names who, where and what ("Souta on 12D3Ko…a1b2c3 wants to look through your camera") with *Allow
once*, *Always* and *Never*. It never blocks the window and never takes the keyboard from the message box; requests
that come while one is shown wait behind it (the bar says how many). A request the policy stops waiting for (no
answer in time: companions/trust/policy.py) leaves the bar at once.

:class:`RefusalNotes` says every refusal in a notification (who, where, what, why), at most once a minute for the
same source and capability, so a flood of requests is one note, not a hundred.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from companions.trust.policy import (
    DOCUMENTS,
    IMPORTED_PLACE,
    TOOL_PLACE,
    Answer,
    Capability,
    ConsentRefused,
    ConsentRequest,
    Source,
)
from companions.trust.sources import BRIDGE_PLACE, NETWORK_PLACE
from companions.wire.bus import Bus, BusItem
from ui.window.attached import Attached, Retranslating
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named
from ui.window.panel_ports import ConsentPort

NOTE_EVERY_S: Final = 60.0
TEXTS: Final = Texts("consent", {
    "ask.camera": QT_TRANSLATE_NOOP("consent", "{who} {where} wants to look through your camera."),
    "ask.voice": QT_TRANSLATE_NOOP("consent", "{who} {where} wants to speak through your speakers."),
    "ask.files": QT_TRANSLATE_NOOP("consent", "{who} {where} wants to search your files."),
    "ask.memory": QT_TRANSLATE_NOOP("consent", "{who} {where} wants to search your past conversations."),
    "ask.tools": QT_TRANSLATE_NOOP("consent", "{who} {where} wants to use a tool of an MCP server or plugin ({tool})."),
    # a line that holds the user's private things, before it leaves this window (companions/trust/outbound.py)
    "ask.share_camera": QT_TRANSLATE_NOOP(
        "consent", "{companion}'s line holds what your camera saw. Send it to {who} {where}? If not, it stays in "
                   "this window."),
    "ask.share_files": QT_TRANSLATE_NOOP(
        "consent", "{companion}'s line holds words of your files. Send it to {who} {where}? If not, it stays in "
                   "this window."),
    "ask.share_memory": QT_TRANSLATE_NOOP(
        "consent", "{companion}'s line holds your past conversations. Send it to {who} {where}? If not, it stays in "
                   "this window."),
    # a turn of the user's (or of the app's) whose prompt holds words from outside (companions/trust/policy.py)
    "held.camera": QT_TRANSLATE_NOOP(
        "consent", "{companion} wants to look through your camera, and what it was told holds words from {who} "
                   "{where}."),
    "held.voice": QT_TRANSLATE_NOOP(
        "consent", "{companion} wants to speak through your speakers, and what it was told holds words from {who} "
                   "{where}."),
    "held.files": QT_TRANSLATE_NOOP(
        "consent", "{companion} wants to search your files, and what it was told holds words from {who} {where}."),
    "held.memory": QT_TRANSLATE_NOOP(
        "consent", "{companion} wants to search your past conversations, and what it was told holds words from "
                   "{who} {where}."),
    "held.tools": QT_TRANSLATE_NOOP(
        "consent", "{companion} wants to use a tool of an MCP server or plugin ({tool}), and what it was told holds "
                   "words from {who} {where}."),
    "where.network": QT_TRANSLATE_NOOP("consent", "on {peer}"),
    "where.files": QT_TRANSLATE_NOOP("consent", "in your knowledge folders"),
    "where.tool": QT_TRANSLATE_NOOP("consent", "(a tool's result)"),
    "who.documents": QT_TRANSLATE_NOOP("consent", "your documents"),  # only ever said after another word
    "who.peer": QT_TRANSLATE_NOOP("consent", "the computer"),  # a peer that runs no companion here: "on 12D3Ko…"
    "where.bridge": QT_TRANSLATE_NOOP("consent", "through the bridge"),
    "where.outside": QT_TRANSLATE_NOOP("consent", "from outside this window"),
    "who.imported": QT_TRANSLATE_NOOP("consent", "An imported conversation"),
    "where.imported": QT_TRANSLATE_NOOP("consent", "in a companion's prompt"),
    "once": QT_TRANSLATE_NOOP("consent", "Allow once"),
    "always": QT_TRANSLATE_NOOP("consent", "Always"),
    "never": QT_TRANSLATE_NOOP("consent", "Never"),
    "once.tip": QT_TRANSLATE_NOOP("consent", "Allow this time only; ask again next time"),
    "always.tip": QT_TRANSLATE_NOOP("consent", "Allow from now on (Settings, Privacy tab: forget it)"),
    "never.tip": QT_TRANSLATE_NOOP("consent", "Refuse from now on (Settings, Privacy tab: forget it)"),
    "waiting": QT_TRANSLATE_NOOP("consent", "{n} more question(s) waiting"),
    "refused.title": QT_TRANSLATE_NOOP("consent", "Not allowed"),
    "refused.camera": QT_TRANSLATE_NOOP("consent", "{who} {where} may not look through your camera."),
    "refused.voice": QT_TRANSLATE_NOOP("consent", "{who} {where} may not speak through your speakers."),
    "refused.files": QT_TRANSLATE_NOOP("consent", "{who} {where} may not search your files."),
    "refused.memory": QT_TRANSLATE_NOOP("consent", "{who} {where} may not search your past conversations."),
    "refused.tools": QT_TRANSLATE_NOOP("consent", "{who} {where} may not use tools of MCP servers and plugins."),
    "refused.share_camera": QT_TRANSLATE_NOOP(
        "consent", "A line that holds what your camera saw stayed in this window: {who} {where} got a notice instead."),
    "refused.share_files": QT_TRANSLATE_NOOP(
        "consent", "A line that holds words of your files stayed in this window: {who} {where} got a notice instead."),
    "refused.share_memory": QT_TRANSLATE_NOOP(
        "consent", "A line that holds your past conversations stayed in this window: {who} {where} got a notice "
                   "instead."),
    "what.camera": QT_TRANSLATE_NOOP("consent", "Look through the camera"),
    "what.voice": QT_TRANSLATE_NOOP("consent", "Speak through the speakers"),
    "what.files": QT_TRANSLATE_NOOP("consent", "Search your files"),
    "what.memory": QT_TRANSLATE_NOOP("consent", "Search past conversations"),
    "what.tools": QT_TRANSLATE_NOOP("consent", "Tools of MCP servers and plugins"),
    "what.share_camera": QT_TRANSLATE_NOOP("consent", "Get lines that hold what the camera saw"),
    "what.share_files": QT_TRANSLATE_NOOP("consent", "Get lines that hold words of your files"),
    "what.share_memory": QT_TRANSLATE_NOOP("consent", "Get lines that hold your past conversations"),
})


def where_text(source: Source, language: str | None = None) -> str:
    """``on 12D3Ko…a1b2c3`` (a peer on the network), ``through the bridge``, or ``from outside this window``."""
    kind, _, peer = source.place.partition(":")
    if kind == NETWORK_PLACE and peer:
        return TEXTS.text("where.network", language, peer=f"{peer[:6]}…{peer[-6:]}" if len(peer) > 14 else peer)
    if kind == BRIDGE_PLACE:
        return TEXTS.text("where.bridge", language)
    if kind == IMPORTED_PLACE:
        return TEXTS.text("where.imported", language)
    if kind == DOCUMENTS.place:
        return TEXTS.text("where.files", language)
    if kind == TOOL_PLACE:
        return TEXTS.text("where.tool", language)
    return TEXTS.text("where.outside", language)


def who_text(source: Source, language: str | None = None) -> str:
    """The source's name as the window shows it (an imported conversation's in ``language``'s words)."""
    if source.place == IMPORTED_PLACE:
        return TEXTS.text("who.imported", language)
    if source.id == "peer" and source.place.startswith(f"{NETWORK_PLACE}:") and not source.name:
        return TEXTS.text("who.peer", language)
    return TEXTS.text("who.documents", language) if source == DOCUMENTS else source.shown_name


def question_text(request: ConsentRequest, language: str | None = None) -> str:
    """What the bar asks: who, where and what."""
    who, where = who_text(request.source, language), where_text(request.source, language)
    if request.capability.startswith("share_"):
        return TEXTS.text(f"ask.{request.capability}", language, companion=request.held_by, who=who, where=where)
    if request.held_by:
        return TEXTS.text(f"held.{request.capability}", language, companion=request.held_by, who=who, where=where,
                          tool=request.detail)
    return TEXTS.text(f"ask.{request.capability}", language, who=who, where=where, tool=request.detail)


def capability_text(capability: Capability, language: str | None = None) -> str:
    """A capability's name in the settings' list (``Look through the camera``)."""
    return TEXTS.text(f"what.{capability}", language)


@dataclass(eq=False)
class _Question:
    request: ConsentRequest
    answer: asyncio.Future[Answer | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ConsentPrompt(Retranslating, QFrame):
    """The bar that asks (hidden while nothing is asked). :meth:`ask` is the ``ConsentAsker`` port's method."""

    asked = Signal(object)  # ConsentRequest: shown (for tests and the window's attention)
    queue_changed = Signal()  # a question came or went

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "consentPrompt")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.question = named(QLabel(), "consentQuestion")
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)  # names come from outside: never rich text
        font = self.question.font()
        font.setBold(True)
        self.question.setFont(font)
        self.waiting = named(QLabel(), "consentWaiting")
        self.once = named(QPushButton(), "consentOnce")
        self.always = named(QPushButton(), "consentAlways")
        self.never = named(QPushButton(), "consentNever")
        for button in (self.once, self.always, self.never):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # a click never takes the keyboard from the message box
        self.once.clicked.connect(self._answer_once)
        self.always.clicked.connect(self._answer_always)
        self.never.clicked.connect(self._answer_never)
        buttons = QHBoxLayout()
        buttons.addWidget(self.waiting, 1)
        for button in (self.once, self.always, self.never):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.question)
        layout.addLayout(buttons)
        self._queue: list[_Question] = []
        self._port: ConsentPort | None = None
        self.retranslate()
        self.hide()

    def attach(self, port: ConsentPort) -> None:
        """The runtime's trust policy asks through this bar from now on (after the runtime started)."""
        self._port = port
        port.use_asker(self)

    def detach(self) -> None:
        """Nobody asks here any more: what is still open is dismissed (refused). Safe to call twice."""
        if self._port is not None:
            self._port.use_asker(None)
            self._port = None
        self.refuse_all()

    def place_in(self, panel: QWidget) -> None:
        """Puts the bar at the top of ``panel`` (the chat)."""
        layout = panel.layout()
        assert isinstance(layout, QVBoxLayout | QHBoxLayout)
        layout.insertWidget(0, self)

    def retranslate(self) -> None:
        for button, key in ((self.once, "once"), (self.always, "always"), (self.never, "never")):
            button.setText(TEXTS.text(key))
            button.setToolTip(TEXTS.text(f"{key}.tip"))
        self._show_first()

    @property
    def shown(self) -> ConsentRequest | None:
        """The request on screen, if any."""
        return self._queue[0].request if self._queue else None

    @property
    def pending(self) -> list[ConsentRequest]:
        return [q.request for q in self._queue]

    async def ask(self, request: ConsentRequest) -> Answer | None:
        question = _Question(request)
        self._queue.append(question)
        self._show_first()
        try:
            return await question.answer
        finally:
            self._drop(question)  # answered, or the policy stopped waiting (its timeout cancelled us)

    def answer(self, answer: Answer | None) -> None:
        """The user's answer to the question on screen (``None``: dismissed)."""
        if self._queue and not self._queue[0].answer.done():
            self._queue[0].answer.set_result(answer)
        if self._queue:
            self._drop(self._queue[0])

    def _answer_once(self) -> None:
        self.answer(Answer.ONCE)

    def _answer_always(self) -> None:
        self.answer(Answer.ALWAYS)

    def _answer_never(self) -> None:
        self.answer(Answer.NEVER)

    def refuse_all(self) -> None:
        """The window goes away: every question still open is dismissed (its request refused)."""
        while self._queue:
            self.answer(None)

    def _drop(self, question: _Question) -> None:
        if question in self._queue:
            self._queue.remove(question)
            self._show_first()

    def _show_first(self) -> None:
        self.queue_changed.emit()
        if not self._queue:
            self.hide()
            return
        first = self._queue[0]
        text = question_text(first.request)
        changed = self.question.text() != text or self.isHidden()
        self.question.setText(text)
        self.setAccessibleName(text)
        more = len(self._queue) - 1
        self.waiting.setText(TEXTS.text("waiting", n=more) if more else "")
        self.show()
        if changed:
            self.asked.emit(first.request)


class RefusalNotes(Attached, QObject):
    """Says each refusal from outside in a notification (``notify(title, text, details)``), once a minute at most
    per source and capability. :meth:`attach` after the runtime started."""

    def __init__(self, bus: Bus, notify: Callable[[str, str, str], object], *,
                 clock: Callable[[], float] = time.monotonic, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.notify = notify
        self.clock = clock
        self._last: dict[tuple[str, Capability], float] = {}
        self.follow_bus(bus, ("events",))

    def on_item(self, item: BusItem) -> None:
        if not isinstance(item, ConsentRefused):
            return
        key, now = (item.source.key, item.capability), self.clock()
        last = self._last.get(key)
        if last is not None and now - last < NOTE_EVERY_S:
            return
        self._last[key] = now
        text = TEXTS.text(f"refused.{item.capability}", who=who_text(item.source),
                          where=where_text(item.source))
        self.notify(TEXTS.text("refused.title"), text, item.reason)
