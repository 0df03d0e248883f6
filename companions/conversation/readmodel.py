"""The observable state of the conversation: immutable snapshots published on the bus ``events`` topic.

The manager publishes a :class:`ConversationChanged` after every change (a vote in, a speaker chosen, the floor
passing, the conversation ending). The UI renders ``view``; tests wait on it with :class:`ConversationReadModel`.
Snapshots carry a ``revision`` so that a late or duplicated event never rolls the view back.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

from companions.conversation.ballot import VoteOutcome, VoteStatus
from companions.conversation.closing import EndReason
from companions.conversation.selection import SelectionRule
from companions.conversation.speaking_first import Occasion
from companions.wire.bus import BusItem, LocalEvent
from companions.wire.following import EventsFollower
from companions.wire.protocol import Closing, Speech

ConversationStatus: TypeAlias = Literal["idle", "running", "ended"]
TurnPhase: TypeAlias = Literal["voting", "composing", "waiting", "speaking", "done", "cancelled", "ended"]
V = TypeVar("V", "VoteView", "TurnView", "ConversationView")
_FIELDS: dict[type, frozenset[str]] = {}


def evolve(view: V, **changes: Any) -> V:
    """``dataclasses.replace`` for the frozen views here, which have no ``__post_init__``: a copy of the instance's
    fields with ``changes`` applied. The manager derives a new view a dozen times a turn, and ``replace`` (which
    runs ``__init__`` and ``object.__setattr__`` for every field) was a fifth of a turn's own time."""
    cls = type(view)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    if not changes.keys() <= names:
        raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - names)}")
    new = object.__new__(cls)
    new.__dict__.update(view.__dict__)
    new.__dict__.update(changes)
    return new


@dataclass(frozen=True)
class VoteView:
    """One voter's ballot as the window shows it: its status, and the vote's fields once it voted."""

    companion: str
    status: VoteStatus
    state: Speech | None = None
    importance: int | None = None
    selected: bool = False
    closing: Closing = "none"
    reason: str = ""
    error: str = ""

    @classmethod
    def of(cls, outcome: VoteOutcome) -> VoteView:
        if outcome.status != "voted":
            return cls(outcome.voter, outcome.status, "listen", 0, error=outcome.error)
        v = outcome.vote
        return cls(outcome.voter, "voted", v.state, v.importance, v.selected, v.closing, v.reason)


@dataclass(frozen=True)
class TurnView:
    """One turn, keyed by the id of the message that opened it."""

    turn_id: str
    opened_by: str
    number: int
    phase: TurnPhase
    votes: tuple[VoteView, ...] = ()
    speaker: str | None = None
    selection_reason: str = ""
    selection_rule: SelectionRule | None = None
    closing: Closing = "none"
    passed_over: tuple[str, ...] = ()  # ranked before the speaker, they could not answer (the floor passed on)
    occasion: Occasion | None = None  # why the turn opened when no message did (speaking_first.py)

    def vote_of(self, companion: str) -> VoteView | None:
        return next((v for v in self.votes if v.companion == companion), None)


@dataclass(frozen=True)
class ConversationView:
    """Everything a person watching the conversation can see.

    Attributes:
        status: idle (nothing yet), running, or ended (see ``ended_reason``).
        turn: the current (or last) turn.
        floor: who is speaking aloud right now.
        closing: the conversation's closing stage.
        ended_reason / ended_detail: why it ended, machine- and human-readable.
        turns_taken: companion turns since the conversation (re)started with a user message.
        repetition: similarity of the latest message to the recent ones (0..1).
    """

    revision: int = 0
    status: ConversationStatus = "idle"
    turn: TurnView | None = None
    floor: str | None = None
    closing: Closing = "none"
    ended_reason: EndReason | None = None
    ended_detail: str = ""
    turns_taken: int = 0
    present: tuple[str, ...] = ()
    muted: tuple[str, ...] = ()
    forced_next: str | None = None
    repetition: float = 0.0


@dataclass(frozen=True)
class ConversationChanged(LocalEvent):
    view: ConversationView
    change: str


class ConversationReadModel(EventsFollower, name="conversation-read-model", maxsize=10_000):
    """Keeps the latest :class:`ConversationView` from the bus and lets callers wait for a condition on it."""

    def __init__(self, keep: int = 2000) -> None:
        self.view = ConversationView()
        self.changes: collections.deque[ConversationChanged] = collections.deque(maxlen=keep)
        self._waiters: list[tuple[Callable[[ConversationView], bool], asyncio.Future[ConversationView]]] = []

    def apply(self, item: BusItem) -> None:
        if not isinstance(item, ConversationChanged) or item.view.revision <= self.view.revision:
            return
        self.view = item.view
        self.changes.append(item)
        still: list[tuple[Callable[[ConversationView], bool], asyncio.Future[ConversationView]]] = []
        for predicate, future in self._waiters:
            if future.done():
                continue
            if predicate(item.view):
                future.set_result(item.view)
            else:
                still.append((predicate, future))
        self._waiters = still

    def turns(self) -> list[TurnView]:
        """The last snapshot of every turn seen in the active conversation (since the last switch), in order."""
        last: dict[int, TurnView] = {}  # by turn number: a resumed conversation may reopen a message's turn
        for change in self.changes:
            if change.change == "switched":  # another conversation: its turns are numbered from 1 again
                last.clear()
            elif change.view.turn is not None:
                last[change.view.turn.number] = change.view.turn
        return list(last.values())

    async def wait_for(self, predicate: Callable[[ConversationView], bool], timeout: float = 5.0) -> ConversationView:
        """Returns the first view (the current one included) for which ``predicate`` holds.

        Raises:
            TimeoutError: with the last view in the message, when ``timeout`` passes first.
        """
        if predicate(self.view):
            return self.view
        future: asyncio.Future[ConversationView] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise TimeoutError(f"condition not met within {timeout} s; last view: {self.view}") from None
        finally:
            future.cancel()
