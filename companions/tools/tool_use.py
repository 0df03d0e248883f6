"""What companions did with their tools, for the people watching: each call and each tool source's trouble.

The worker publishes a :class:`ToolUsed` on the bus ``events`` topic after every tool call of a turn (built-in,
plugin or MCP: ``origin`` says which; ``refused``: a turn started from outside the window was not allowed it); a
companion publishes a :class:`ToolProblem` when one of its tool sources fails (an MCP server that cannot start or
dies, a plugin that does not load). The window's Turns panel lists both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from companions.wire.bus import LocalEvent

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
