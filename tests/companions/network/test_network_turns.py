"""Two nodes take the same turns: two ConversationManagers, each with its own companions, joined by their real
NetworkLinks over an in-memory port pair (companions/network/pair.py: it hands each payload to the other node,
after a delay the test chooses per topic and direction). A vote that reaches one node later than the other, or
nodes whose deadlines differ, must not make them pick different speakers (companions/conversation/vote_round.py)."""

from __future__ import annotations

import asyncio

from companions.conversation import ConversationChanged
from companions.network.pair import Delay, PairPort
from companions.wire.protocol import CompanionMetadata, Message, State
from tests.companions.network_doubles import Companion, Node, start_node


async def node(peer: str, companions: list[Companion], *, deadline_s: float, delay: Delay | None = None,
               turn_cap: int = 1) -> Node[PairPort]:
    """A node whose network is an in-memory pair port (joined to another by ``pair``)."""
    return await start_node(PairPort(peer, delay), companions, deadline_s=deadline_s, turn_cap=turn_cap)


async def pair(a: Node[PairPort], b: Node[PairPort], a_has: list[Companion], b_has: list[Companion]) -> None:
    a.network.other, b.network.other = b.network, a.network
    a.link.announced(b.network.peer, tuple(CompanionMetadata(id=c.id, name=c.id) for c in b_has))
    b.link.announced(a.network.peer, tuple(CompanionMetadata(id=c.id, name=c.id) for c in a_has))


def votes_of(companion: str, seconds: float) -> Delay:
    """Delays the States ``companion`` publishes by ``seconds`` (everything else arrives at once)."""
    return lambda topic, payload: seconds if topic == "states" and f'"from":"{companion}"' in \
        payload.decode().replace(" ", "") else 0.0


def ended(n: Node[PairPort]) -> bool:
    return n.manager.view.status == "ended"


async def test_a_vote_that_reaches_the_other_node_after_its_deadline_still_counts_there() -> None:
    # akari (on A) wants the floor most and votes at once; her vote reaches B only after B's deadline has passed.
    akari, souta = Company.akari(), Company.souta()
    a = await node("peer-a", [akari], deadline_s=0.3, delay=votes_of("akari", 0.9))
    b = await node("peer-b", [souta], deadline_s=0.3)
    await pair(a, b, [akari], [souta])
    a.bus.publish(Message.create(from_="user", message="what shall we do today?"))
    await a.wait_for(lambda: ended(a))
    await b.wait_for(lambda: ended(b))
    # both nodes chose akari from the same two votes: one line, said by akari, heard on both
    assert a.speakers() == b.speakers() == ["akari"]
    assert a.lines() == [("user", "what shall we do today?"), ("akari", "akari answers")]
    assert b.lines() == [("user@peer-a", "what shall we do today?"), ("akari", "akari answers")]  # A's user
    assert a.ids() == b.ids()
    assert souta.composed == []
    await a.stop()
    await b.stop()


async def test_nodes_with_different_deadlines_wait_for_the_vote_its_own_node_judged() -> None:
    # A's model server is slow (a long deadline there), B's is fast: akari's vote, in time on A, comes after B's
    # deadline. B follows A's judgement of akari's vote, not its own deadline.
    akari, souta = Company.akari(vote_s=0.8), Company.souta()
    a = await node("peer-a", [akari], deadline_s=3.0)
    b = await node("peer-b", [souta], deadline_s=0.3)
    await pair(a, b, [akari], [souta])
    b.bus.publish(Message.create(from_="user", message="anyone?"))
    await b.wait_for(lambda: ended(b))
    await a.wait_for(lambda: ended(a))
    assert a.speakers() == b.speakers() == ["akari"]
    assert b.lines() == [("user", "anyone?"), ("akari", "akari answers")]
    assert a.lines() == [("user@peer-b", "anyone?"), ("akari", "akari answers")]  # B's user, not A's
    assert a.ids() == b.ids()
    await a.stop()
    await b.stop()


async def test_a_vote_late_on_its_own_node_is_published_as_listen_and_counted_so_everywhere() -> None:
    # akari votes after A's deadline: A counts listen and says so; B, with a longer deadline, counts the same.
    akari, souta = Company.akari(vote_s=1.0), Company.souta()
    a = await node("peer-a", [akari], deadline_s=0.3)
    b = await node("peer-b", [souta], deadline_s=3.0)
    await pair(a, b, [akari], [souta])
    user = Message.create(from_="user", message="hello?")
    a.bus.publish(user)
    await a.wait_for(lambda: ended(a))
    await b.wait_for(lambda: ended(b))
    assert a.speakers() == b.speakers() == ["souta"]
    listen = [s for s in b.seen if isinstance(s, State) and s.params.from_ == "akari"
              and s.params.messageId == user.params.id]
    assert [(s.params.messageId, s.params.state, s.params.importance) for s in listen] == [
        (user.params.id, "listen", 0)]
    assert akari.composed == []
    await a.stop()
    await b.stop()


async def test_a_muted_companion_is_said_to_listen_so_no_node_waits_for_it() -> None:
    akari, souta = Company.akari(importance=3), Company.souta(importance=9)
    a = await node("peer-a", [akari], deadline_s=0.3)
    b = await node("peer-b", [souta], deadline_s=0.3)
    await pair(a, b, [akari], [souta])
    b.manager.mute("souta")
    started = asyncio.get_running_loop().time()
    a.bus.publish(Message.create(from_="user", message="hi both"))
    await a.wait_for(lambda: ended(a))
    await b.wait_for(lambda: ended(b))
    assert asyncio.get_running_loop().time() - started < 3  # not the wait for a remote vote (95 s)
    assert a.speakers() == ["akari"]
    await a.stop()
    await b.stop()


async def test_a_message_to_everyone_naming_a_companion_elsewhere_is_its_turn_on_both_nodes() -> None:
    # On A the user's message has an empty to; B gets it addressed to every companion (reference nodes answer only
    # messages naming them). Both see that it names souta, and neither runs a vote round for it.
    akari, souta = Company.akari(), Company.souta(importance=1)
    a = await node("peer-a", [akari], deadline_s=0.3)
    b = await node("peer-b", [souta], deadline_s=0.3)
    await pair(a, b, [akari], [souta])
    user = Message.create(from_="user", message="Souta, how are you?")
    a.bus.publish(user)
    await a.wait_for(lambda: ended(a))
    await b.wait_for(lambda: ended(b))
    assert a.speakers() == b.speakers() == ["souta"]
    assert a.lines()[1] == b.lines()[1] == ("souta", "souta answers")
    # named: no vote round anywhere
    assert not [s for n in (a, b) for s in n.seen if isinstance(s, State) and s.params.messageId == user.params.id]
    await a.stop()
    await b.stop()


class Company:
    @staticmethod
    def akari(importance: int = 9, vote_s: float = 0.0) -> Companion:
        return Companion("akari", importance, vote_s)

    @staticmethod
    def souta(importance: int = 5, vote_s: float = 0.0) -> Companion:
        return Companion("souta", importance, vote_s)


async def test_a_vote_lost_on_the_way_does_not_hold_the_turn_the_speakers_line_settles_it() -> None:
    # akari's vote never reaches B (lost): A had both votes and chose akari; her line reaches B while B still
    # waits for that vote, and B follows it instead of waiting for the vote (or choosing souta).
    akari, souta = Company.akari(), Company.souta()
    a = await node("peer-a", [akari], deadline_s=0.3, delay=votes_of("akari", 3600.0))
    b = await node("peer-b", [souta], deadline_s=0.3)
    await pair(a, b, [akari], [souta])
    started = asyncio.get_running_loop().time()
    a.bus.publish(Message.create(from_="user", message="who goes first?"))
    await a.wait_for(lambda: ended(a))
    await b.wait_for(lambda: ended(b))
    assert asyncio.get_running_loop().time() - started < 3
    assert a.speakers() == b.speakers() == ["akari"]
    assert a.ids() == b.ids()
    assert souta.composed == []
    turns = [e.view.turn for e in b.seen if isinstance(e, ConversationChanged) and e.view.turn is not None
             and e.view.turn.number == 1]
    assert turns[-1].selection_rule == "settled"
    await a.stop()
    await b.stop()


async def test_a_node_whose_turn_cap_is_reached_says_its_companions_listen_so_the_other_node_goes_on() -> None:
    # The nodes' settings differ: B stops after one turn, A would take two. On akari's line B takes no vote round,
    # and A, which does, learns at once that souta listens (it would wait for souta's vote otherwise).
    akari, souta = Company.akari(), Company.souta()
    a = await node("peer-a", [akari], deadline_s=0.3, turn_cap=2)
    b = await node("peer-b", [souta], deadline_s=0.3, turn_cap=1)
    await pair(a, b, [akari], [souta])
    a.bus.publish(Message.create(from_="user", message="tell me something"))
    await a.wait_for(lambda: ended(a))
    await b.wait_for(lambda: ended(b))
    assert a.speakers() == b.speakers() == ["akari"]
    assert b.manager.view.ended_reason == "turn-cap"
    assert a.manager.view.ended_reason == "no-speaker"  # souta listens; akari just spoke and is not asked
