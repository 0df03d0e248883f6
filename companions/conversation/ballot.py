"""What a companion's vote is: one typed model, read once, and its one way onto the wire and back.

A vote says whether a companion wants the next turn. It is the wire ``State`` (``state.send``: ``speak``/``listen``,
``importance`` 0-10, ``selected``, ``closing``) plus a short free-text ``reason`` that only the window shows.

- **Read once.** :class:`Vote` is validated where the vote comes in: the companion's model output
  (companions/companion/companion.py asks for this schema as structured output), or a ``State`` a companion elsewhere
  published (:meth:`Vote.of_state`, for a network companion or a bridge client's). After that it is trusted as it is.
- **One way onto the wire.** :meth:`Vote.to_state` is the only place a vote becomes a ``State``; the wire shape
  (companions/wire/protocol.py) is the reference framework's and never changes here.
- How a vote is then counted is decided elsewhere, each in one place: what makes a vote ``selected`` and how closed
  it is at least (selection.py: :func:`~companions.conversation.selection.counted`), who speaks next (selection.py),
  how long a vote may take (deadline.py), and the round that collects them (vote_round.py).

A vote that fails (any exception: ``invalid``) or is known never to come (:class:`VoteNeverComes`: ``missing``) is not
a :class:`Vote`, and the round counts it as :data:`LISTEN`; :class:`VoteOutcome` says how each voter's
ballot ended (what the window's Turns panel shows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator

from companions.wire.protocol import Closing, Speech, State

REASON_CHARS: Final = 80


class Vote(BaseModel):
    """A companion's view of the next turn: the wire ``State``'s fields plus a free-text reason for the window.

    ``selected`` means "I was named or asked directly"; ``closing`` is where the companion thinks the conversation
    stands (none -> pre-closing -> closing -> terminal). A small model loops inside an unbounded free-text field: the
    schema bounds the reason (a grammar-constrained server keeps to it) and a longer one is cut rather than refused.
    """

    model_config = ConfigDict(frozen=True)

    state: Speech
    importance: int = Field(ge=0, le=10)
    selected: bool = False
    closing: Closing = "none"
    reason: str = Field(default="", json_schema_extra={"maxLength": REASON_CHARS})

    @field_validator("reason", mode="before")
    @classmethod
    def _short_reason(cls, value: object) -> object:
        return value[:REASON_CHARS] if isinstance(value, str) else value

    def to_state(self, voter: str, turn_id: str) -> State:
        """The ``state.send`` that publishes this vote of ``voter`` on the turn opened by message ``turn_id``
        (the reason stays here: the wire has no field for it)."""
        return State.create(from_=voter, message_id=turn_id, state=self.state, importance=self.importance,
                            selected=self.selected, closing=self.closing)

    @classmethod
    def of_state(cls, state: State, *, reason: str = "") -> Vote:
        """The vote a ``State`` from elsewhere carries (already validated as wire input); ``reason`` says where it
        came from, for the window."""
        p = state.params
        return cls(state=p.state, importance=p.importance, selected=p.selected, closing=p.closing, reason=reason)


LISTEN: Final = Vote(state="listen", importance=0)
"""What a vote that is missing, unreadable or not cast counts as."""


class VoteNeverComes(Exception):
    """Raised by a vote that is known not to come (a companion elsewhere whose peer left the network).

    It counts as ``listen`` at once, without waiting for the deadline; the read model shows it as ``missing``.
    """


VoteStatus: TypeAlias = Literal["pending", "voted", "missing", "invalid", "muted"]


@dataclass(frozen=True)
class VoteOutcome:
    """How a voter's ballot ended; ``vote`` is what selection uses (:data:`LISTEN` unless ``status == "voted"``)."""

    voter: str
    status: VoteStatus
    vote: Vote
    error: str = ""
    latency_s: float = 0.0
