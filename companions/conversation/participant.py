"""The port between conversation control and a companion: what the manager asks of each participant.

Conversation control never talks to an LLM, a worker or a speaker directly; it drives :class:`Participant` objects.
The real companion (worker + cards + speak query) plugs in through an adapter (companions/companion/participant.py),
a companion elsewhere through companions/network/remote.py; tests subclass :class:`Participant` with small doubles.
Every method may fail or hang: the manager bounds each call (vote deadline, compose timeout), cancels it on
interrupt, and turns failures into values (a failed vote is ``listen``, a failed composition passes the floor on).
What a vote is lives in ballot.py.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from companions.conversation.ballot import Vote
from companions.trust.policy import Capability
from companions.wire.protocol import Closing, Emotion, Message


@dataclass(frozen=True, eq=False)
class Ballots:
    """The ballots of one vote round: vote_round.py starts them all at once (in one pass of the event loop) and gives
    every voter's :class:`TurnContext` this same object, so that participants whose votes one model endpoint decides
    can gather them into one request (companions/companion/joint_vote.py). One round, one object: compared by
    identity."""

    turn_id: str
    voters: tuple[str, ...]


@dataclass(frozen=True)
class TurnContext:
    """What a participant is told when a turn opens.

    Attributes:
        turn_id: the id of the message that opened the turn (the wire ``messageId`` of the votes).
        message: that message.
        history: the messages this participant heard while present, oldest first, ending with ``message``.
        present: ids of every present companion (including this one).
        user_id: the id the user speaks under.
        addressed_directly: this participant is the only companion the message's ``to`` names.
        closing_hint: the stage the framework pushes toward (the repetition detector); a vote or a line
            should not be less closed than this.
        origin: who the turn answers in the end: the ``from`` of the latest message of its chain that did not come
            from this app's own companions (the user in the window, or someone outside; companions/trust/policy.py).
            ``None``: not known (the message's own ``from`` is taken).
        ballots: the vote round this vote belongs to (set by vote_round.py; ``None`` outside a round: the
            participant votes on its own).
    """

    turn_id: str
    message: Message
    history: tuple[Message, ...]
    present: tuple[str, ...]
    user_id: str
    addressed_directly: bool = False
    closing_hint: Closing = "none"
    origin: str | None = None
    ballots: Ballots | None = None
    # While composing, the participant may offer each finished sentence of its line here: it is said at once
    # (once the floor is clear) while the rest is generated. Set by the manager for a participant that can
    # ``speak_part``; ``None`` otherwise.
    early: Callable[[str], None] | None = None


@dataclass(frozen=True)
class ComposedLine:
    """The line the floor holder composed (what it wants to say; the speech device's ``Utterance`` in
    companions/devices/ports.py is how a line is voiced). The manager turns it into a ``Message`` with ``from`` set to
    the speaker's id (never taken from the model). An empty ``to`` means everyone present and the user."""

    text: str
    to: tuple[str, ...] = ()
    emotion: Emotion | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    # A line a companion elsewhere already published (companions/network/remote.py): the manager takes it as it is.
    published: Message | None = None
    # What it holds of the user's private things (the camera's, the user's files, past conversations): the manager
    # says so just before the line is published (companions/trust/outbound.py PrivateLine), and it goes out only where
    # the user allowed it.
    private: frozenset[Capability] = frozenset()


class ParticipantRoster(Protocol):
    """Where participants join and leave the conversation (the ConversationManager): this app's companions the user
    lets go or brings back, the guests the bridge and the network add and remove."""

    @property
    def present(self) -> frozenset[str]: ...

    def add_participant(self, participant: Participant) -> None: ...

    def remove_participant(self, companion: str) -> None: ...


@dataclass(frozen=True)
class Pace:
    """What a participant's model endpoint is like: which endpoint (participants sharing one queue there), how many
    requests it runs at once (``None``: as many as asked), how long one vote takes (``None``: not measured), and
    how long it may take when the server has none of its prompt cached (``vote_bound_s``: a deadline's measure;
    ``None``: ``vote_s``).

    ``joint``: where more of a round's voters share the endpoint than it has slots, their votes are decided by one
    request (a joint ballot: companions/companion/joint_vote.py), which each voter beyond the first lengthens by
    ``joint_voter_s`` (its entry; ``None``: not measured)."""

    endpoint: str
    slots: int | None = None
    vote_s: float | None = None
    vote_bound_s: float | None = None
    joint: bool = False
    joint_voter_s: float | None = None


@dataclass(frozen=True)
class Description:
    """What a participant may tell the manager beyond the :class:`Participant` calls, so that some turns need no
    vote round (see direct.py): its names (in every language), a persona text, its model endpoint's pace, and how
    to warm its prompt while the conversation is idle (warming.py)."""

    names: tuple[str, ...] = ()
    persona: str = ""
    pace_of: Callable[[], Pace | None] = lambda: None
    # The participant runs elsewhere (companions/network): every node must then take the same turns, so a message
    # to everyone always gets a vote round (whether to answer at once depends on each node's own endpoints).
    remote: bool = False
    # Evaluates the participant's prompt prefix on its model server ahead of its next turn (warming.py); ``None``
    # where that does not pay (a hosted API, a model without a server).
    warm: Callable[[], Awaitable[bool]] | None = None
    # One of this app's own companions: a turn answering its line answers what its line answered (the turn's
    # ``origin``). Any other participant's line (from elsewhere, a test double) is an origin of its own.
    own: bool = False

    def pace(self) -> Pace | None:
        return self.pace_of()


class Participant(abc.ABC):
    """A companion as conversation control sees it: subclass it and give ``id``, :meth:`vote` and :meth:`compose`;
    everything else has a default.

    Call order per turn: ``vote`` (in parallel with the other addressed participants, bounded by the vote
    deadline: deadline.py); for the chosen speaker ``compose`` (may run while the previous speaker is still
    speaking); then, once the previous speech finished, the manager publishes the message and awaits ``speak``.
    ``interrupt`` is the cancellation hook: the manager calls it (besides cancelling the pending coroutine) when the
    user interrupts or stops, so that work running outside the loop (a TTS thread, an HTTP stream) stops too.

    Attributes:
        id: the companion id (``from`` of its messages and votes).
        description: what it tells the manager beyond these calls (names, persona, pace...); empty by default.
        speaks_early: it can say the first sentences of its line while the rest is composed (:meth:`speak_part`).
    """

    id: str
    description: Description = Description()
    speaks_early: ClassVar[bool] = False

    @abc.abstractmethod
    async def vote(self, turn: TurnContext) -> Vote:
        """Returns this participant's vote for the turn. May raise (shown as ``invalid``;
        :class:`~companions.conversation.ballot.VoteNeverComes` for a vote known not to come: ``missing``) or hang:
        that counts as ``listen``."""

    @abc.abstractmethod
    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        """Thinks of what to say now that it holds the floor; ``closing`` is the stage to speak at
        (``terminal`` means: say goodbye). ``None`` or an exception passes the floor to the next candidate."""

    async def speak(self, message: Message) -> None:
        """Says ``message`` aloud (the ``speak`` query) and returns when the speech has finished. By default
        nothing is said (a participant without a voice here)."""
        return None

    async def speak_part(self, text: str) -> None:
        """Says one sentence of the line being composed (early speech); only called when :attr:`speaks_early`."""
        raise NotImplementedError(f"{type(self).__name__} does not speak early")

    async def interrupt(self) -> None:
        """Stops in-flight generation and speech now. Idempotent; must not raise. By default nothing runs outside
        the coroutines the manager cancels."""
        return None


