"""The companion roster: one row per companion, with its avatar, its name, what it is doing now and, for one that
runs elsewhere, where (on the network's peer, or through the bridge) and whether it can be reached.

Qt's model/view: the rows and their states are a :class:`~ui.roster.model.RosterModel` (roles for the id, state,
name, place, reachability; what each state means is told there), painted by a
:class:`~ui.roster.delegate.RosterDelegate`. Mute / unmute and "speak next" act on the current row: the buttons
under the list, or the row's context menu (the Menu key and Shift+F10 open it too), which also lets one of this
app's companions leave the conversation or come back. They are commands (``ui.window.panel_ports.ConversationControl``);
conversation control decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QAction, QIcon, QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from companions.wire.bus import Bus, BusItem
from ui.roster.delegate import AVATAR_SIZE, RosterDelegate, state_icon
from ui.roster.display_names import DisplayNames
from ui.roster.faces import FACES
from ui.roster.model import COMPANION_ROLE, PLACE_ROLE, RosterModel, RosterState
from ui.turns.texts import turns_text
from ui.window.attached import AttachedWidget
from ui.window.naming import named
from ui.window.panel_ports import ConversationControl, People, RemoteCompanions


class _RosterList(QListView):
    """The list, with the Menu key and Shift+F10 opening the current row's menu wherever the platform does not."""

    keyboard_menu_requested = Signal(QPoint)  # the Menu key or Shift+F10 on the current row (its centre)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        menu_key = event.key() == Qt.Key.Key_Menu and not event.modifiers()
        shift_f10 = event.key() == Qt.Key.Key_F10 and event.modifiers() == Qt.KeyboardModifier.ShiftModifier
        current = self.currentIndex()
        if (menu_key or shift_f10) and current.isValid():
            event.accept()  # accepted: Qt synthesizes no second context-menu event from it
            self.keyboard_menu_requested.emit(self.visualRect(current).center())
            return
        super().keyPressEvent(event)


class RosterPanel(AttachedWidget, QWidget):
    """The roster: ``people`` present and away, ``elsewhere`` those that run elsewhere when it opens, the bus what
    changes. Call :meth:`attach` once the runtime started, :meth:`detach` before it stops."""

    state_changed = Signal(str, str)  # a companion id and its new RosterState

    def __init__(self, bus: Bus, control: ConversationControl, people: People, elsewhere: RemoteCompanions, *,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.control, self.people, self.elsewhere = control, people, elsewhere
        self.names = DisplayNames(people)
        self._icons: dict[tuple[str, str, RosterState, str | None, float, int], QIcon] = {}  # painted once per look
        self.model = RosterModel(self._local_companions, self._icon, self)
        self.title = named(QLabel(), "rosterTitle")
        self.list = named(_RosterList(), "roster")
        self.list.setModel(self.model)
        self.list.setItemDelegate(RosterDelegate(self.list))
        self.list.setIconSize(QSize(AVATAR_SIZE, AVATAR_SIZE))
        self.list.setSpacing(2)
        self.list.setUniformItemSizes(True)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._open_menu)
        self.list.keyboard_menu_requested.connect(self._open_menu_from_keyboard)
        self.list.selectionModel().currentChanged.connect(self._on_current_changed)
        self.model.modelReset.connect(self._update_buttons)
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
        self.follow_bus(bus, ("events", "messages", "actions"))  # states; feelings and gestures
        self._name_controls()

    # -- lifecycle -------------------------------------------------------------------------------------------
    def on_attach(self) -> None:
        """Lists the runtime's companions (the bus says what changes from now on)."""
        self.model.view = self.control.view()
        # who is elsewhere already; from now on, the bus says
        self.model.set_remote(network=self.elsewhere.network(), guests=self.elsewhere.guests())

    def retranslate(self) -> None:
        self._name_controls()
        self.refresh()

    # -- what the user sees ----------------------------------------------------------------------------------
    def companion_ids(self) -> list[str]:
        return self.model.ids()

    def state_of(self, companion_id: str) -> RosterState | None:
        return self.model.state_of(companion_id)

    def index_of(self, companion_id: str) -> QModelIndex | None:
        row = self.model.row_of(companion_id)
        return self.model.index(row) if row is not None else None

    def text_of(self, companion_id: str) -> str | None:
        """The row's two lines: the name, and the state in words."""
        index = self.index_of(companion_id)
        return str(index.data()) if index is not None else None

    def place_of(self, companion_id: str) -> str | None:
        """Where the row says it runs (empty for this app's own companions)."""
        index = self.index_of(companion_id)
        return str(index.data(PLACE_ROLE)) if index is not None else None

    def icon_of(self, companion_id: str) -> QIcon | None:
        index = self.index_of(companion_id)
        return index.data(Qt.ItemDataRole.DecorationRole) if index is not None else None

    def current_id(self) -> str | None:
        index = self.list.currentIndex()
        return str(index.data(COMPANION_ROLE)) if index.isValid() else None

    def refresh(self) -> None:
        """Lists the companions again (keeps the current row)."""
        keep = self.current_id()
        changed = self.model.rebuild()
        self._keep_current(keep)
        self.list.viewport().update()
        self._announce(changed)

    def _keep_current(self, keep: str | None) -> None:
        """The row that was current stays current when rows came or went (a reset of the model clears it)."""
        if keep is not None and self.current_id() != keep and (index := self.index_of(keep)) is not None:
            self.list.setCurrentIndex(index)

    # -- commands --------------------------------------------------------------------------------------------
    def set_muted(self, companion_id: str, muted: bool) -> None:
        self.control.mute(companion_id, muted)

    def speak_next(self, companion_id: str) -> None:
        self.control.force(companion_id)

    def set_present(self, companion_id: str, present: bool) -> None:
        self.control.set_present(companion_id, present)

    def menu_for(self, companion_id: str) -> QMenu:
        """The context menu of a row (shown by :meth:`_open_menu`; tests trigger its actions)."""
        menu = QMenu(self)
        state = self.model.state_of(companion_id) or "absent"
        muted = state == "muted"
        mute = menu.addAction(turns_text("unmute" if muted else "mute"))
        mute.setData(("mute", companion_id, not muted))
        mute.setEnabled(state != "absent")
        speak = menu.addAction(turns_text("speak_next"))
        speak.setData(("next", companion_id, True))
        speak.setEnabled(state not in ("absent", "muted"))
        if companion_id in self.people.companion_ids():  # this app's own: it can leave and come back
            away = state == "absent"
            seat = menu.addAction(turns_text("join" if away else "leave"))
            seat.setData(("seat", companion_id, away))
        menu.triggered.connect(self._on_menu_action)
        return menu

    def _on_menu_action(self, action: QAction) -> None:
        kind, companion_id, flag = action.data()
        if kind == "mute":
            self.set_muted(companion_id, flag)
        elif kind == "seat":
            self.set_present(companion_id, flag)
        else:
            self.speak_next(companion_id)

    def _open_menu(self, pos: QPoint) -> QMenu | None:
        """The row's menu at the mouse. No entry is made current: the right button is still held when the menu
        opens under the pointer (X11 asks for a context menu on the press), and its release over a current entry
        would choose it (the first, "Mute", muted the companion on a plain right-click); the person points at an
        entry, or presses an arrow key."""
        index = self.list.indexAt(pos)
        if not index.isValid():
            index = self.list.currentIndex()
        if not index.isValid():
            return None
        self.list.setCurrentIndex(index)
        if self.menu is not None:
            self.menu.close()
        self.menu = self.menu_for(str(index.data(COMPANION_ROLE)))
        self.menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.menu.aboutToHide.connect(self._menu_closed)
        rect = self.list.visualRect(index)
        at = pos if rect.contains(pos) else rect.center()  # a keyboard request: next to the current row
        self.menu.popup(self.list.viewport().mapToGlobal(at))
        return self.menu

    def _open_menu_from_keyboard(self, pos: QPoint) -> None:
        menu = self._open_menu(pos)
        if menu is not None:
            menu.setActiveAction(menu.actions()[0])  # no button is held: Enter and the arrow keys work at once

    def _menu_closed(self) -> None:
        self.menu = None

    def _toggle_mute_current(self) -> None:
        companion = self.current_id()
        if companion is not None:
            self.set_muted(companion, self.model.state_of(companion) != "muted")

    def _speak_next_current(self) -> None:
        companion = self.current_id()
        if companion is not None:
            self.speak_next(companion)

    # -- the bus ---------------------------------------------------------------------------------------------
    def on_item(self, item: BusItem) -> None:
        keep = self.current_id()
        changed = self.model.apply(item)
        if changed is not None:
            self._keep_current(keep)
            self._announce(changed)

    def _announce(self, changed: Sequence[tuple[str, RosterState]]) -> None:
        self._update_buttons()
        for companion_id, state in changed:
            self.state_changed.emit(companion_id, state)

    # -- rendering -------------------------------------------------------------------------------------------
    def _local_companions(self) -> list[tuple[str, str, bool]]:
        """This app's companions: ``(id, name in the language, away?)`` in the cast's order."""
        return [(who, self.names.of(who), self.people.away(who))
                for who in self.people.companion_ids()]

    def _icon(self, companion_id: str, name: str, state: RosterState, expression: str | None = None) -> QIcon:
        """The row's icon; painting an avatar and its badge costs about half a millisecond, and states come and
        go several times a turn."""
        key = (companion_id, name, state, expression, self.devicePixelRatioF(), FACES.revision)  # a new picture
        icon = self._icons.get(key)
        if icon is None:
            icon = self._icons[key] = state_icon(companion_id, name, state, expression=expression,
                                                 device_pixel_ratio=key[4])
        return icon

    def _name_controls(self) -> None:
        self.title.setText(turns_text("roster.title"))
        self.list.setAccessibleName(turns_text("roster.title"))
        self.next_button.setText(turns_text("speak_next"))
        self.next_button.setToolTip(turns_text("speak_next.tooltip"))
        self.mute_button.setToolTip(turns_text("mute.tooltip"))
        self._update_buttons()

    def _on_current_changed(self, *_: object) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        companion = self.current_id()
        state = (self.model.state_of(companion) or "absent") if companion is not None else "absent"
        self.mute_button.setText(turns_text("unmute" if state == "muted" else "mute"))
        self.mute_button.setEnabled(state != "absent")
        self.next_button.setEnabled(state not in ("absent", "muted"))
