"""Where each companion runs, and whether it is reachable: one row per companion, this computer's first, then the
ones that joined over the peer-to-peer network (their peer, reachable or not), then the people on other machines who
spoke here (each machine's own user: never this app's user, whatever they are called there). Shown only when the
network is on; its status line says where this computer listens, or why the network is not available. Follows
``NetworkChanged`` on the bus (companions/network/link.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from companions.companion.guests import RemoteCompanion
from companions.network.link import NetworkChanged, NetworkLink
from companions.network.people import RemotePerson
from companions.network.port import NetworkStatus
from companions.wire.bus import Bus, BusItem
from ui.roster.display_names import DisplayNames
from ui.window.attached import AttachedWidget
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts
from ui.window.naming import named
from ui.window.panel_ports import People

TEXTS: Final = Texts("network", {
    "title": QT_TRANSLATE_NOOP("network", "Where they run"),
    "here": QT_TRANSLATE_NOOP("network", "this computer"),
    "reachable": QT_TRANSLATE_NOOP("network", "reachable"),
    "unreachable": QT_TRANSLATE_NOOP("network", "unreachable"),
    "listening": QT_TRANSLATE_NOOP("network", "Network: {address}"),
    "off": QT_TRANSLATE_NOOP("network", "Network not available ({reason})"),
    "starting": QT_TRANSLATE_NOOP("network", "Network: starting"),
    "person": QT_TRANSLATE_NOOP("network", "{name} — a person on {peer}"),
})


def _text(key: str, language: str | None = None) -> str:
    return TEXTS.text(key, language)


def person_row(person: RemotePerson, language: str | None = None) -> str:
    """``user — a person on 16Uiu2H…a1b2c3``: someone who spoke here from another machine, and which one."""
    return _text("person", language).format(name=person.name, peer=person.place)


def remote_row(companion: RemoteCompanion, language: str | None = None) -> str:
    """``souta — peer …a1b2c3 (reachable)``: the name, the end of its peer id, and whether it is reachable now."""
    state = _text("reachable" if companion.reachable else "unreachable", language)
    return f"{companion.name} — {companion.peer[:6]}…{companion.peer[-6:]} ({state})"


class NetworkPanel(AttachedWidget, QWidget):
    """The panel; :meth:`attach` after the runtime started, :meth:`detach` before it stops."""

    changed = Signal()  # after every render

    def __init__(self, bus: Bus, network: Callable[[], NetworkLink | None], people: People,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.network = network
        self.people = people
        self.names = DisplayNames(people)
        self.title = named(QLabel(), "networkTitle")
        self.status = named(QLabel(), "networkStatus")
        self.status.setWordWrap(True)
        self.list = named(QListWidget(), "networkCompanions")
        self.title.setBuddy(self.list)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.status)
        layout.addWidget(self.list, 1)
        self.follow_bus(bus, ("events",))
        self._status = NetworkStatus(running=False)
        self._remote: tuple[RemoteCompanion, ...] = ()
        self._people: tuple[RemotePerson, ...] = ()
        self.setVisible(network() is not None)

    def on_attach(self) -> None:
        network = self.network()
        self.setVisible(network is not None)
        if network is not None:
            self._status = network.status
            self._remote = network.listed()
            self._people = network.people()
        self._render()

    def retranslate(self) -> None:
        self._render()

    def rows(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def on_item(self, item: BusItem) -> None:
        if isinstance(item, NetworkChanged):
            self._status, self._remote, self._people = item.status, item.remote, item.people
            self._render()

    def _render(self) -> None:
        self.title.setText(_text("title"))
        if self._status.running:
            self.status.setText(_text("listening").format(
                address=self._status.addresses[0] if self._status.addresses else self._status.peer_id))
        elif self._status.problem:
            self.status.setText(_text("off").format(reason=self._status.problem))
        else:
            self.status.setText(_text("starting"))
        self.list.clear()
        elsewhere = {r.id for r in self._remote}
        for companion in self.people.companion_ids():
            if companion not in elsewhere:
                name = self.names.of(companion)
                self.list.addItem(QListWidgetItem(f"{name} — {_text('here')}"))
        for remote in self._remote:
            self.list.addItem(QListWidgetItem(remote_row(remote)))
        for person in self._people:
            self.list.addItem(QListWidgetItem(person_row(person)))
        self.changed.emit()
