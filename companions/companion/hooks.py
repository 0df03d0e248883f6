"""Worker hooks (seed 001): points where code may intervene in a turn, and the outcomes they return.

Subclass :class:`WorkerHook` and override what you need; every method is an async no-op by default. When a worker
has several hooks they are asked in order and the first outcome that is not ``Continue`` (or ``Finish``) wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from companions.llm.types import ChatMessage


@dataclass(frozen=True)
class Continue:
    """Go on as planned."""


@dataclass(frozen=True)
class Skip:
    """Leave this out: before a tool call, do not run it (the model reads ``reason``); after one, hide the result;
    before sending, end the turn quietly without a request."""

    reason: str = "skipped by policy"


@dataclass(frozen=True)
class Abort:
    """Stop the whole turn now, for ``reason``."""

    reason: str


ControlFlow: TypeAlias = Continue | Skip | Abort
CONTINUE: Final = Continue()


@dataclass(frozen=True)
class Finish:
    """The turn is over."""


@dataclass(frozen=True)
class ContinueWithMessages:
    """Append ``messages`` (e.g. a lint error) and run the model again: the self-correction loop."""

    messages: tuple[ChatMessage, ...]


TurnEndDecision: TypeAlias = Finish | ContinueWithMessages
FINISH: Final = Finish()


@dataclass
class PendingToolCall:
    """A tool call the model asked for, before it runs. Hooks may rewrite ``arguments`` (raw JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass
class ToolCallResult:
    """A tool call's result, before the model sees it. Hooks may rewrite ``content``."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    arguments: str = "{}"
    notes: list[str] = field(default_factory=list)


class WorkerHook:
    """Base class of hooks: override the methods you need."""

    async def on_message_send(self, context: list[ChatMessage]) -> ControlFlow:
        """Before each request. ``context`` may be changed in place (e.g. inject guidance)."""
        return CONTINUE

    async def before_tool_call(self, call: PendingToolCall) -> ControlFlow:
        """Before one tool runs: Continue, Skip (not run) or Abort (end the turn); may rewrite ``call.arguments``."""
        return CONTINUE

    async def after_tool_call(self, result: ToolCallResult) -> ControlFlow:
        """After one tool ran: may rewrite ``result.content``; Skip hides the result from the model."""
        return CONTINUE

    async def on_turn_end(self, messages: Sequence[ChatMessage]) -> TurnEndDecision:
        """When the model answered without tool calls. ``messages`` are this turn's messages so far."""
        return FINISH
