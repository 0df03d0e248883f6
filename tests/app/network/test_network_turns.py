"""Two Madoi nodes on the real network (the py-libp2p adapter, each in its own thread, on loopback), one process:
they take the same turns when their deadlines differ, and a peer that vanishes mid-turn counts as a missing vote
on the other node at once (companions/conversation/vote_round.py: a vote is judged where it is cast)."""

from __future__ import annotations

import asyncio

import pytest

from companions.conversation import (
    ConversationChanged,
)
from companions.wire.protocol import Message
from tests.app.madoi_nodes import joined, start_node
from tests.companions.network_doubles import Companion

pytestmark = pytest.mark.slow


async def test_two_nodes_with_different_deadlines_take_the_same_turn() -> None:
    # akari's node has a long deadline (its model is slow) and akari votes after 0.8 s; souta's node would have
    # given up on her vote after 0.3 s. It waits for the State akari's node publishes instead.
    akari, souta = Companion("akari", importance=9, vote_s=0.8), Companion("souta", importance=5)
    a = await start_node(akari, deadline_s=5.0)
    b = await start_node(souta, deadline_s=0.3)
    try:
        await joined(a, b, "akari", "souta")
        b.bus.publish(Message.create(from_="user", message="what shall we do?"))
        await a.wait_for(lambda: a.manager.view.status == "ended")
        await b.wait_for(lambda: b.manager.view.status == "ended")
        assert a.first_speaker() == b.first_speaker() == "akari"
        assert b.lines() == [("user", "what shall we do?"), ("akari", "akari answers")]
        # on akari's machine, the user of souta's machine (the same message: turns are keyed by its id)
        assert a.lines() == [(f"user@{b.link.status.peer_id}", "what shall we do?"), ("akari", "akari answers")]
        assert [m.params.id for m in a.seen if isinstance(m, Message)] == \
            [m.params.id for m in b.seen if isinstance(m, Message)]
        assert souta.composed == []
    finally:
        await a.stop()
        await b.stop()


async def test_a_peer_that_vanishes_mid_turn_counts_as_a_missing_vote_at_once() -> None:
    akari, souta = Companion("akari", importance=9, vote_s=60.0), Companion("souta", importance=5)
    a = await start_node(akari, deadline_s=90.0)
    b = await start_node(souta, deadline_s=0.3)
    try:
        await joined(a, b, "akari", "souta")
        b.bus.publish(Message.create(from_="user", message="are you there?"))
        await asyncio.wait_for(akari.voting.wait(), 20)
        started = asyncio.get_running_loop().time()
        await a.link.stop()  # akari's machine leaves while her vote is awaited
        await b.wait_for(lambda: b.manager.view.status == "ended")
        assert asyncio.get_running_loop().time() - started < 10  # not the wait for a remote vote (95 s)
        assert b.first_speaker() == "souta"
        turns = [e.view.turn for e in b.seen if isinstance(e, ConversationChanged) and e.view.turn is not None
                 and e.view.turn.number == 1]
        gone = turns[-1].vote_of("akari")
        assert gone is not None
        assert gone.status == "missing"
    finally:
        await a.manager.stop()
        await b.stop()
