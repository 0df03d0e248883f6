"""A companion that runs elsewhere (another Madoi process, a reference node) as a conversation participant.

Every node of the network runs the same turn-taking on the same messages and votes, as the reference's nodes do:
a companion votes by publishing its State for the message (``messageId``), and the one every node selects composes
and publishes its own line. So here a remote companion's vote is the State it published for the turn, and its line
is the next message it published after the turn's message; the line is already on the bus (the manager takes it
as it is: ``ComposedLine.published``) and is spoken on the companion's own machine. A vote or a line that does not come
counts as missing (the manager's deadlines); a peer that vanishes fails what is pending at once.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Final

from companions.conversation.ballot import Vote, VoteNeverComes
from companions.conversation.participant import ComposedLine, Description, Participant, TurnContext
from companions.wire.protocol import Closing, CompanionMetadata, Message, State

log = logging.getLogger(__name__)
KEPT: Final = 64  # votes and lines kept per remote companion (they may arrive before the manager asks)
SILENT_AFTER_S: Final = 30.0
"""A remote companion whose vote was still awaited when the round gave up on it after this long let it pass: its
node never said even ``listen`` (an honest node publishes exactly one State per turn, ``listen`` when late). It is
not waited for again (its vote counts as missing at once) until it votes again. A peer that announces companions
and never votes would otherwise hold every turn addressed to them for ``remote_vote_wait_s`` (95 s); now only the
first. Every node waited the same round, so every node stops waiting for it alike."""


class SilentCompanion(VoteNeverComes):
    """The companion let a vote pass without a word (see SILENT_AFTER_S): it is not waited for until it votes."""


class PeerGone(VoteNeverComes):
    """The peer running the companion left the network (its pending vote counts as missing at once)."""


class MessageOrder:
    """The order in which this process saw messages (every message on the bus, local or remote)."""

    def __init__(self) -> None:
        self._seq = 0
        self._of: collections.OrderedDict[str, int] = collections.OrderedDict()

    def saw(self, message_id: str) -> int:
        if message_id not in self._of:
            self._seq += 1
            self._of[message_id] = self._seq
            if len(self._of) > 4 * KEPT:
                self._of.popitem(last=False)
        return self._of[message_id]

    def of(self, message_id: str) -> int | None:
        return self._of.get(message_id)

    @property
    def last(self) -> int:
        return self._seq


class RemoteParticipant(Participant):
    """A :class:`~companions.conversation.participant.Participant` whose votes and lines come from its peer."""

    def __init__(self, metadata: CompanionMetadata, peer: str, order: MessageOrder) -> None:
        self.id = metadata.id
        self.peer = peer
        self._order = order
        self.use_metadata(metadata)
        self._votes: collections.OrderedDict[str, asyncio.Future[Vote]] = collections.OrderedDict()
        self._lines: collections.deque[tuple[int, Message]] = collections.deque(maxlen=KEPT)
        self._line_arrived = asyncio.Event()
        self._gone: PeerGone | None = None
        self._silent = False

    @property
    def reachable(self) -> bool:
        return self._gone is None

    # -- fed by the network link ----------------------------------------------------------------------------
    def use_metadata(self, metadata: CompanionMetadata) -> None:
        """What its peer announced about it (again, when its card there changed): its names and persona."""
        self.metadata = metadata
        persona = " ".join(t for t in (metadata.personality, metadata.story) if t)
        self.description = Description(names=tuple(sorted({metadata.name, metadata.id})), persona=persona,
                                       remote=True)

    @property
    def silent(self) -> bool:
        """It let a vote pass without a word and has not voted since (see SILENT_AFTER_S)."""
        return self._silent

    def heard_state(self, state: State) -> None:
        if self._silent:
            log.info("network: %s votes again; it is waited for again", self.id)
        self._silent = False
        future = self._vote_future(state.params.messageId)
        if future.done():
            return
        future.set_result(Vote.of_state(state, reason=f"voted on {self.peer[-8:]}"))

    def heard_line(self, message: Message) -> None:
        self._lines.append((self._order.saw(message.params.id), message))
        self._line_arrived.set()

    def vanish(self) -> None:
        """Its peer left: pending and future votes and lines fail at once (a missing vote, a passed floor)."""
        self._gone = PeerGone(f"{self.id}'s peer {self.peer} left the network")
        for future in self._votes.values():
            if not future.done():
                future.set_exception(self._gone)
                future.exception()  # retrieved: nobody may be waiting any more
        self._line_arrived.set()

    # -- the Participant port -------------------------------------------------------------------------------
    async def vote(self, turn: TurnContext) -> Vote:
        if self._gone is not None:
            raise self._gone
        future = self._vote_future(turn.turn_id)
        if self._silent and not future.done():
            raise SilentCompanion(f"{self.id} let its last vote pass without a word; not waited for until it votes")
        started = asyncio.get_running_loop().time()
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            if not future.done() and asyncio.get_running_loop().time() - started >= SILENT_AFTER_S:
                self._silent = True
                log.warning("network: %s (peer %s) let a vote pass without a word; it is not waited for until it "
                            "votes again", self.id, self.peer)
            raise

    async def compose(self, turn: TurnContext, closing: Closing) -> ComposedLine | None:
        after = self._order.of(turn.message.params.id)
        if after is None:
            after = self._order.last
        while True:
            if self._gone is not None:
                raise self._gone
            for seq, line in list(self._lines):
                if seq > after:
                    self._lines.remove((seq, line))  # a line answers one turn
                    emotion = line.params.metadata.emotion if line.params.metadata is not None else None
                    return ComposedLine(text=line.params.message, to=tuple(line.params.to), emotion=emotion,
                                     published=line)
            self._line_arrived.clear()
            await self._line_arrived.wait()

    async def speak(self, message: Message) -> None:
        return None  # said on the companion's own machine

    async def interrupt(self) -> None:
        return None  # a remote companion hears the user's message and stops by itself

    def _vote_future(self, turn_id: str) -> asyncio.Future[Vote]:
        future = self._votes.get(turn_id)
        if future is None:
            future = self._votes[turn_id] = asyncio.get_running_loop().create_future()
            if self._gone is not None:
                future.set_exception(self._gone)
                future.exception()
            while len(self._votes) > KEPT:
                _, old = self._votes.popitem(last=False)
                old.cancel()
        return future
