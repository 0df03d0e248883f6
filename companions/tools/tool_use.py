"""What companions did with their tools, for the people watching: each call and each tool source's trouble.

The worker publishes a :class:`ToolUsed` on the bus ``events`` topic after every tool call of a turn (built-in,
plugin or MCP: ``origin`` says which; ``refused``: a turn started from outside the window was not allowed it); a
companion publishes a :class:`ToolProblem` when one of its tool sources fails (an MCP server that cannot start or
dies, a plugin that does not load). :class:`ToolUseLog` is the read model the Turns panel shows: the calls of each
turn, in order.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from companions.wire.bus import Bus, BusItem, LocalEvent, Subscription

RESULT_CHARS: Final = 160  # of a result kept for the view


@dataclass(frozen=True)
class ToolUsed(LocalEvent):
    """One tool call of a companion's turn, with the start of its result."""

    companion_id: str
    turn_id: str
    tool: str
    origin: str
    arguments: str
    result: str
    is_error: bool = False
    refused: bool = False  # not run: the turn began outside the window and its source was not allowed the tool

    @classmethod
    def of(cls, companion_id: str, turn_id: str, tool: str, *, origin: str, arguments: str, result: str,
           is_error: bool, refused: bool = False) -> ToolUsed:
        flat = " ".join(result.split())
        short = flat if len(flat) <= RESULT_CHARS else flat[: RESULT_CHARS - 1] + "…"
        return cls(companion_id, turn_id, tool, origin, arguments, short, is_error or refused, refused)


@dataclass(frozen=True)
class ToolProblem(LocalEvent):
    """A companion's tool source failed (``text`` names it and says why); its other tools still work."""

    companion_id: str
    text: str


class ToolUseLog:
    """The tool calls seen on the bus, by turn (the latest ``keep`` turns); ``on_change`` is called after each."""

    def __init__(self, keep: int = 200, on_change: Callable[[ToolUsed], object] | None = None) -> None:
        self.by_turn: collections.OrderedDict[str, list[ToolUsed]] = collections.OrderedDict()
        self.keep = keep
        self.on_change = on_change
        self._subscription: Subscription | None = None

    def attach(self, bus: Bus) -> Subscription:
        self._subscription = bus.subscribe("events", self.apply, name="tool-use-log")
        return self._subscription

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def apply(self, item: BusItem) -> None:
        if not isinstance(item, ToolUsed):
            return
        self.by_turn.setdefault(item.turn_id, []).append(item)
        self.by_turn.move_to_end(item.turn_id)
        while len(self.by_turn) > self.keep:
            self.by_turn.popitem(last=False)
        if self.on_change is not None:
            self.on_change(item)

    def of_turn(self, turn_id: str) -> list[ToolUsed]:
        return list(self.by_turn.get(turn_id, ()))
