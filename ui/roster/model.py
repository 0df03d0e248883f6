"""The roster's model: one row per companion (this app's, then those on the network, then those through the bridge),
with what it is doing now and where it runs.

A row's state comes from the bus (``events``), the most telling first:
- absent: conversation control does not count it as present (``ConversationView.present``), or it is away, or
  (on the network) unreachable;
- muted: the user muted it (``ConversationView.muted``);
- speaking: its voice plays (``SpeakingChanged``) or it holds the floor (``ConversationView.floor``);
- thinking: its vote is pending, or it composes / waits for the floor as the turn's speaker (``ConversationView``),
  or its model is streaming (``TextStreamed`` until ``TurnEnded``);
- listening: otherwise.
Where a companion runs comes from the parts that know it: the network link's ``NetworkChanged`` (the source the
network panel lists too: a companion there stays, marked unreachable, when its peer goes) and the bridge's
``BridgeGuestsChanged`` (a companion through the bridge leaves with its client's connection).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, get_args

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QIcon

from companions.companion.cast import CastChanged
from companions.companion.guests import BridgeGuestsChanged, RemoteCompanion
from companions.companion.worker import TextStreamed, TurnEnded
from companions.conversation.readmodel import ConversationChanged, ConversationView
from companions.devices.ports import SpeakingChanged
from companions.network.link import NetworkChanged
from companions.tools.builtins import Gesture
from companions.wire.bus import BusItem
from companions.wire.protocol import Action, Message
from ui.turns.texts import turns_text
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts

RosterState: TypeAlias = Literal["absent", "muted", "speaking", "thinking", "listening"]
Where: TypeAlias = Literal["here", "network", "bridge"]
GESTURES: Final = frozenset(get_args(Gesture))  # shown in words beside "speaking" (ui/turns/texts.py "gesture.*")
COMPANION_ROLE: Final = Qt.ItemDataRole.UserRole
STATE_ROLE: Final = Qt.ItemDataRole.UserRole + 1
NAME_ROLE: Final = Qt.ItemDataRole.UserRole + 2
PLACE_ROLE: Final = Qt.ItemDataRole.UserRole + 3  # where it runs, as shown ("" for this app's own)
REACHABLE_ROLE: Final = Qt.ItemDataRole.UserRole + 4
WORDS_ROLE: Final = Qt.ItemDataRole.UserRole + 5  # the state in words

PLACES: Final = Texts("roster", {
    "network": QT_TRANSLATE_NOOP("roster", "on {peer}"),
    "bridge": QT_TRANSLATE_NOOP("roster", "via bridge"),
    "unreachable": QT_TRANSLATE_NOOP("roster", "unreachable"),
})


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


def place_text(where: Where, peer: str, reachable: bool, language: str | None = None) -> str:
    """``on 12D3Ko…a1b2c3``, ``via bridge``, ``unreachable (on 12D3Ko…a1b2c3)``; empty for this app's own."""
    if where == "here":
        return ""
    text = PLACES.text(where, language, peer=f"{peer[:6]}…{peer[-6:]}")
    if not reachable:  # first: what matters most when the row is narrow
        text = f"{PLACES.text('unreachable', language)} ({text})"
    return text


@dataclass
class _Row:
    id: str
    name: str
    where: Where
    peer: str = ""
    reachable: bool = True
    state: RosterState = "absent"


class RosterModel(QAbstractListModel):
    """The rows. ``local`` gives this app's companions as ``(id, name in the language)``, in their order; ``icon``
    paints a row's avatar with its state's badge (the delegate module's, cached by the panel)."""

    def __init__(self, local: Callable[[], Sequence[tuple[str, str, bool]]],
                 icon: Callable[[str, str, RosterState, str | None], QIcon],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._local = local  # (id, name, away?) of this app's companions
        self._icon = icon
        self._rows: list[_Row] = []
        self._away: set[str] = set()
        self._network: tuple[RemoteCompanion, ...] = ()
        self._guests: tuple[RemoteCompanion, ...] = ()
        self.view = ConversationView()
        self._speaking: set[str] = set()
        self._streaming: set[str] = set()
        self._feeling: dict[str, str] = {}  # the emotion of a companion's latest line
        self._gesture: dict[str, str] = {}  # the gesture it made while this line is spoken

    # -- Qt's model ------------------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        words = turns_text(f"state.{row.state}")
        speaking = row.state == "speaking"
        if speaking and row.id in self._gesture:  # "speaking · waving"
            words += " · " + turns_text(f"gesture.{self._gesture[row.id]}")
        place = place_text(row.where, row.peer, row.reachable)
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return f"{row.name}\n{words}"
            case Qt.ItemDataRole.DecorationRole:
                return self._icon(row.id, row.name, row.state, self._feeling.get(row.id) if speaking else None)
            case Qt.ItemDataRole.ToolTipRole:
                return f"{row.name} ({row.id}): {words}" + (f" — {place}" if place else "")
            case Qt.ItemDataRole.AccessibleTextRole:
                return f"{row.name}: {words}" + (f", {place}" if place else "")
            case _ if role == COMPANION_ROLE:
                return row.id
            case _ if role == STATE_ROLE:
                return row.state
            case _ if role == NAME_ROLE:
                return row.name
            case _ if role == WORDS_ROLE:
                return words
            case _ if role == PLACE_ROLE:
                return place
            case _ if role == REACHABLE_ROLE:
                return row.reachable
        return None

    # -- what it shows ---------------------------------------------------------------------------------------
    def ids(self) -> list[str]:
        return [row.id for row in self._rows]

    def row_of(self, companion_id: str) -> int | None:
        return next((i for i, row in enumerate(self._rows) if row.id == companion_id), None)

    def state_of(self, companion_id: str) -> RosterState | None:
        row = self.row_of(companion_id)
        return self._rows[row].state if row is not None else None

    def set_remote(self, network: Sequence[RemoteCompanion] | None = None,
                   guests: Sequence[RemoteCompanion] | None = None) -> list[tuple[str, RosterState]]:
        """The companions elsewhere now (``None``: as they were); rows come and go. Returns the changed states."""
        if network is not None:
            self._network = tuple(network)
        if guests is not None:
            self._guests = tuple(guests)
        return self.rebuild()

    def rebuild(self) -> list[tuple[str, RosterState]]:
        """Lists the companions again (this app's may have changed: the language, who is away)."""
        local = list(self._local())
        self._away = {companion_id for companion_id, _, away in local if away}
        rows = [_Row(companion_id, name, "here") for companion_id, name, _ in local]
        known = {row.id for row in rows}
        for where, remote in (("network", self._network), ("bridge", self._guests)):
            for companion in remote:
                if companion.id not in known:
                    known.add(companion.id)
                    rows.append(_Row(companion.id, companion.name, where, companion.peer,  # type: ignore[arg-type]
                                     companion.reachable))
        old = {row.id: row.state for row in self._rows}
        if [(r.id, r.name, r.where, r.peer, r.reachable) for r in rows] != \
                [(r.id, r.name, r.where, r.peer, r.reachable) for r in self._rows]:
            self.beginResetModel()  # a handful of rows, changed when someone joins or leaves
            self._rows = rows
            for row in self._rows:
                row.state = old.get(row.id, "absent")
            self.endResetModel()
        return self._restate()

    def apply(self, item: BusItem) -> list[tuple[str, RosterState]] | None:
        """Follows one bus item; the companions whose state changed (``None``: the item is not the roster's)."""
        if isinstance(item, ConversationChanged):
            if item.view.revision <= self.view.revision:
                return []
            self.view = item.view
        elif isinstance(item, SpeakingChanged):
            (self._speaking.add if item.speaking else self._speaking.discard)(item.speaker_id)
            if not item.speaking:
                self._gesture.pop(item.speaker_id, None)  # a gesture goes with the line it was made for
        elif isinstance(item, Message):
            emotion = item.params.metadata.emotion if item.params.metadata is not None else None
            return self._shown(item.params.from_, self._feeling, emotion or "neutral")
        elif isinstance(item, Action):
            gesture = item.params.params.get("type") if item.params.name == "gesture" else None
            return self._shown(item.params.from_, self._gesture, gesture) if isinstance(gesture, str) else []
        elif isinstance(item, TextStreamed):
            if item.done or item.companion_id in self._streaming:
                return []  # every streamed piece after the first changes nothing here
            self._streaming.add(item.companion_id)
        elif isinstance(item, TurnEnded):
            self._streaming.discard(item.companion_id)
        elif isinstance(item, NetworkChanged):
            return self.set_remote(network=item.remote)
        elif isinstance(item, BridgeGuestsChanged):
            return self.set_remote(guests=item.guests)
        elif isinstance(item, CastChanged):  # a companion edited, made, imported or removed in the window
            changed = self.rebuild()
            if self._rows:  # a new picture or colour under the same name: every row is painted again
                self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1))
            return changed
        else:
            return None
        return self._restate()

    def _shown(self, companion_id: str, kept: dict[str, str], value: str) -> list[tuple[str, RosterState]]:
        """Keeps a companion's feeling or gesture; its row is painted again when it shows (while it speaks)."""
        row = self.row_of(companion_id)
        if row is None or kept.get(companion_id) == value or (value not in GESTURES and kept is self._gesture):
            return []
        kept[companion_id] = value
        if self._rows[row].state == "speaking":
            self.dataChanged.emit(self.index(row), self.index(row))
        return []

    def _restate(self) -> list[tuple[str, RosterState]]:
        changed: list[tuple[str, RosterState]] = []
        for i, row in enumerate(self._rows):
            present = row.reachable and row.id not in self._away and row.id in self.view.present
            state = roster_state(row.id, self.view, present=present, speaking=row.id in self._speaking,
                                 streaming=row.id in self._streaming)
            if state != row.state:
                row.state = state
                changed.append((row.id, state))
                index = self.index(i)
                self.dataChanged.emit(index, index)
        return changed
