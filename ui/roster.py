"""The companion roster: one row per companion, with its avatar, its name and what it is doing now.

A row's state comes from the runtime's bus (``events`` topic), the most telling first:
- absent: conversation control does not count it as present (``ConversationView.present``), or it is away;
- muted: the user muted it (``ConversationView.muted``);
- speaking: its voice plays (``SpeakingChanged``) or it holds the floor (``ConversationView.floor``);
- thinking: its vote is pending, or it composes / waits for the floor as the turn's speaker (``ConversationView``),
  or its model is streaming (``TextStreamed`` until ``TurnEnded``);
- listening: otherwise.
Mute / unmute and "speak next" act on the current row: the buttons under the list, or the row's context menu
(the Menu key and Shift+F10 open it too). They are commands on the bus; conversation control decides.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QKeyEvent, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.runtime import Runtime
from companions.bus import BusItem
from companions.conversation.control import ForceNextSpeaker, MuteCompanion
from companions.conversation.readmodel import ConversationChanged, ConversationView
from companions.devices import SpeakingChanged
from companions.worker import TextStreamed, TurnEnded
from ui.avatars import avatar_pixmap
from ui.bus_bridge import BusFollower
from ui.naming import named
from ui.turns_texts import turns_text

RosterState: TypeAlias = Literal["absent", "muted", "speaking", "thinking", "listening"]
COMPANION_ROLE: Final = Qt.ItemDataRole.UserRole
STATE_ROLE: Final = Qt.ItemDataRole.UserRole + 1
AVATAR_SIZE: Final = 36
BADGE_COLORS: Final[dict[RosterState, str]] = {"speaking": "#2e9e5b", "thinking": "#d9822b", "muted": "#c0392b"}


def roster_state(companion_id: str, view: ConversationView, *, present: bool, speaking: bool,
                 streaming: bool) -> RosterState:
    """What the roster shows for one companion (see the module docstring for the order)."""
    if not present:
        return "absent"
    if companion_id in view.muted:
        return "muted"
    if speaking or view.floor == companion_id:
        return "speaking"
    if streaming:
        return "thinking"
    turn = view.turn
    if turn is not None:
        vote = turn.vote_of(companion_id)
        if turn.phase == "voting" and vote is not None and vote.status == "pending":
            return "thinking"
        if turn.speaker == companion_id and turn.phase in ("composing", "waiting"):
            return "thinking"
    return "listening"


def state_icon(companion_id: str, name: str, state: RosterState, size: int = AVATAR_SIZE,
               device_pixel_ratio: float = 1.0) -> QIcon:
    """The avatar with a badge for the state (none while listening; greyed out when absent)."""
    pixmap = avatar_pixmap(companion_id, name, size, dimmed=state == "absent", device_pixel_ratio=device_pixel_ratio)
    badge = BADGE_COLORS.get(state)
    if badge is not None:
        _paint_badge(pixmap, size, state, QColor(badge))
    return QIcon(pixmap)


def _paint_badge(pixmap: QPixmap, size: int, state: RosterState, color: QColor) -> None:
    r = size * 0.2
    cx, cy = size - r - 0.5, size - r - 0.5
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QColor("#ffffff"), max(1.0, size / 24)))
    painter.setBrush(color)
    painter.drawEllipse(QRectF(cx - r, cy - r, 2 * r, 2 * r))
    white = QColor("#ffffff")
    if state == "thinking":  # three dots
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(white)
        dot = r * 0.22
        for dx in (-0.5 * r, 0.0, 0.5 * r):
            painter.drawEllipse(QRectF(cx + dx - dot, cy - dot, 2 * dot, 2 * dot))
    elif state == "speaking":  # three bars, like a level meter
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(white)
        width = r * 0.22
        for dx, height in ((-0.45 * r, 0.5 * r), (0.0, 0.9 * r), (0.45 * r, 0.6 * r)):
            painter.drawRect(QRectF(cx + dx - width / 2, cy - height / 2, width, height))
    elif state == "muted":  # a bar across, like a no-entry sign
        painter.setPen(QPen(white, max(1.0, r * 0.3), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(QPointF(cx - 0.5 * r, cy), QPointF(cx + 0.5 * r, cy))
    painter.end()


class _RosterList(QListWidget):
    """The list, with the Menu key and Shift+F10 opening the current row's menu wherever the platform does not."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        menu_key = event.key() == Qt.Key.Key_Menu and not event.modifiers()
        shift_f10 = event.key() == Qt.Key.Key_F10 and event.modifiers() == Qt.KeyboardModifier.ShiftModifier
        item = self.currentItem()
        if (menu_key or shift_f10) and item is not None:
            event.accept()  # accepted: Qt synthesizes no second context-menu event from it
            self.customContextMenuRequested.emit(self.visualItemRect(item).center())
            return
        super().keyPressEvent(event)


class RosterPanel(QWidget):
    """The roster of one runtime. Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    state_changed = Signal(str, str)  # a companion id and its new RosterState

    def __init__(self, runtime: Runtime, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runtime = runtime
        self.language = language
        self.title = named(QLabel(), "rosterTitle")
        self.list = named(_RosterList(), "roster")
        self.list.setIconSize(QSize(AVATAR_SIZE, AVATAR_SIZE))
        self.list.setSpacing(2)
        self.list.setUniformItemSizes(True)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._open_menu)
        self.list.currentItemChanged.connect(self._on_current_changed)
        self.title.setBuddy(self.list)
        self.mute_button = named(QPushButton(), "rosterMute")
        self.mute_button.clicked.connect(self._toggle_mute_current)
        self.next_button = named(QPushButton(), "rosterSpeakNext")
        self.next_button.clicked.connect(self._speak_next_current)
        buttons = QHBoxLayout()
        buttons.addWidget(self.mute_button)
        buttons.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.menu: QMenu | None = None  # the open context menu, if any
        self._bus_link = BusFollower(runtime.bus, ("events",))
        self._view = ConversationView()
        self._speaking: set[str] = set()
        self._streaming: set[str] = set()
        self._states: dict[str, RosterState] = {}
        self._icons: dict[tuple[str, str, RosterState, float], QIcon] = {}  # painted once per look, then reused
        self._retranslate()

    # -- lifecycle -------------------------------------------------------------------------------------------
    def attach(self) -> None:
        """Lists the runtime's companions and follows the bus (call after ``runtime.start()``)."""
        if self.runtime.parts.conversation is not None:
            self._view = self.runtime.parts.conversation.view
        self.refresh()
        self._bus_link.follow(self, self._on_item)

    def detach(self) -> None:
        """Stops following the bus (call before the runtime stops or the widget goes)."""
        self._bus_link.stop()

    def set_language(self, language: str) -> None:
        self.language = language
        self._retranslate()
        self.refresh()

    # -- what the user sees ----------------------------------------------------------------------------------
    def companion_ids(self) -> list[str]:
        return [self._id_of(self.list.item(row)) for row in range(self.list.count())]

    def state_of(self, companion_id: str) -> RosterState | None:
        return self._states.get(companion_id)

    def item_of(self, companion_id: str) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if self._id_of(item) == companion_id:
                return item
        return None

    def refresh(self) -> None:
        """Rebuilds the rows from the runtime's cast (keeps the current row)."""
        current = self.list.currentItem()
        keep = self._id_of(current) if current is not None else None
        self.list.clear()
        self._states.clear()
        cast = self.runtime.parts.cast if self.runtime.started else None
        for companion in cast if cast is not None else ():
            item = QListWidgetItem()
            item.setData(COMPANION_ROLE, companion.id)
            self.list.addItem(item)
            if companion.id == keep:
                self.list.setCurrentItem(item)
        self._render(announce=False)

    # -- commands --------------------------------------------------------------------------------------------
    def set_muted(self, companion_id: str, muted: bool) -> None:
        self.runtime.bus.publish(MuteCompanion(companion_id, muted))

    def speak_next(self, companion_id: str) -> None:
        self.runtime.bus.publish(ForceNextSpeaker(companion_id))

    def menu_for(self, companion_id: str) -> QMenu:
        """The context menu of a row (shown by :meth:`_open_menu`; tests trigger its actions)."""
        menu = QMenu(self)
        state = self._states.get(companion_id, "absent")
        muted = state == "muted"
        mute = menu.addAction(turns_text("unmute" if muted else "mute", self.language))
        mute.setData(("mute", companion_id, not muted))
        mute.setEnabled(state != "absent")
        speak = menu.addAction(turns_text("speak_next", self.language))
        speak.setData(("next", companion_id, True))
        speak.setEnabled(state not in ("absent", "muted"))
        menu.triggered.connect(self._on_menu_action)
        return menu

    def _on_menu_action(self, action: QAction) -> None:
        kind, companion_id, flag = action.data()
        if kind == "mute":
            self.set_muted(companion_id, flag)
        else:
            self.speak_next(companion_id)

    def _open_menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos) or self.list.currentItem()
        if item is None:
            return
        self.list.setCurrentItem(item)
        if self.menu is not None:
            self.menu.close()
        self.menu = self.menu_for(self._id_of(item))
        self.menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.menu.aboutToHide.connect(self._menu_closed)
        rect = self.list.visualItemRect(item)
        at = pos if rect.contains(pos) else rect.center()  # a keyboard request: next to the current row
        self.menu.popup(self.list.viewport().mapToGlobal(at))
        self.menu.setActiveAction(self.menu.actions()[0])  # arrow keys and Enter work at once

    def _menu_closed(self) -> None:
        self.menu = None

    def _current_id(self) -> str | None:
        item = self.list.currentItem()
        return self._id_of(item) if item is not None else None

    def _toggle_mute_current(self) -> None:
        companion = self._current_id()
        if companion is not None:
            self.set_muted(companion, self._states.get(companion) != "muted")

    def _speak_next_current(self) -> None:
        companion = self._current_id()
        if companion is not None:
            self.speak_next(companion)

    # -- the bus ---------------------------------------------------------------------------------------------
    def _on_item(self, item: BusItem) -> None:
        if isinstance(item, ConversationChanged):
            if item.view.revision <= self._view.revision:
                return
            self._view = item.view
        elif isinstance(item, SpeakingChanged):
            if item.speaking:
                self._speaking.add(item.speaker_id)
            else:
                self._speaking.discard(item.speaker_id)
        elif isinstance(item, TextStreamed):
            if item.done or item.companion_id in self._streaming:
                return  # every streamed piece after the first changes nothing here
            self._streaming.add(item.companion_id)
        elif isinstance(item, TurnEnded):
            self._streaming.discard(item.companion_id)
        else:
            return
        self._render()

    # -- rendering -------------------------------------------------------------------------------------------
    def _render(self, *, announce: bool = True) -> None:
        cast = self.runtime.parts.cast if self.runtime.started else None
        if cast is None:
            return
        changed: list[tuple[str, RosterState]] = []
        for row in range(self.list.count()):
            item = self.list.item(row)
            companion_id = self._id_of(item)
            companion = cast.companions.get(companion_id)
            present = companion is not None and companion.present and companion_id in self._view.present
            state = roster_state(companion_id, self._view, present=present,
                                 speaking=companion_id in self._speaking, streaming=companion_id in self._streaming)
            if self._states.get(companion_id) == state:
                continue
            self._states[companion_id] = state
            name = companion.card.name(self.language) if companion is not None else companion_id
            words = turns_text(f"state.{state}", self.language)
            item.setText(f"{name}\n{words}")
            item.setData(STATE_ROLE, state)
            item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{name}: {words}")
            item.setToolTip(f"{name} ({companion_id}): {words}")
            item.setIcon(self._icon(companion_id, name, state))
            item.setData(Qt.ItemDataRole.ForegroundRole, None if state != "absent" else
                         self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
            changed.append((companion_id, state))
        self._update_buttons()
        if announce:
            for companion_id, state in changed:
                self.state_changed.emit(companion_id, state)

    def _icon(self, companion_id: str, name: str, state: RosterState) -> QIcon:
        """The row's icon; painting an avatar and its badge costs about half a millisecond, and states come and
        go several times a turn."""
        key = (companion_id, name, state, self.devicePixelRatioF())
        icon = self._icons.get(key)
        if icon is None:
            icon = self._icons[key] = state_icon(companion_id, name, state, device_pixel_ratio=key[3])
        return icon

    def _retranslate(self) -> None:
        self.title.setText(turns_text("roster.title", self.language))
        self.list.setAccessibleName(turns_text("roster.title", self.language))
        self.next_button.setText(turns_text("speak_next", self.language))
        self.next_button.setToolTip(turns_text("speak_next.tooltip", self.language))
        self.mute_button.setToolTip(turns_text("mute.tooltip", self.language))
        self._update_buttons()

    def _on_current_changed(self, *_: object) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        companion = self._current_id()
        state = self._states.get(companion, "absent") if companion is not None else "absent"
        self.mute_button.setText(turns_text("unmute" if state == "muted" else "mute", self.language))
        self.mute_button.setEnabled(state != "absent")
        self.next_button.setEnabled(state not in ("absent", "muted"))

    @staticmethod
    def _id_of(item: QListWidgetItem) -> str:
        return str(item.data(COMPANION_ROLE))
