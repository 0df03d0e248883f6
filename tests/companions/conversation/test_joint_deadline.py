"""The vote deadline of voters whose votes one request decides (a joint ballot: deadline.py): that request, lengthened
by each further voter's entry, instead of every vote queued behind the others."""

from __future__ import annotations

from companions.conversation.deadline import (
    UNMEASURED_JOINT_VOTER_S,
    UNMEASURED_SERIAL_VOTE_S,
    joint,
    vote_deadline,
    vote_round_s,
)
from companions.conversation.participant import Pace


def serial(count: int, *, vote_s: float | None, joint_voter_s: float | None = None, jointly: bool = True,
           slots: int = 1) -> list[Pace]:
    return [Pace("http://127.0.0.1:8080/v1", slots, vote_s, joint=jointly, joint_voter_s=joint_voter_s)] * count


def test_six_voters_of_one_serial_endpoint_take_one_request_lengthened_by_each_entry() -> None:
    paces = serial(6, vote_s=4.0, joint_voter_s=1.0)
    assert joint(paces)
    assert vote_round_s(paces) == 4.0 + 5 * 1.0
    assert vote_deadline(paces, 4.0) == 1.5 * 9.0 + 1.0
    queued = serial(6, vote_s=4.0, jointly=False)  # each vote waits for the ones before it
    assert vote_round_s(queued) == 6 * 4.0


def test_unmeasured_a_joint_ballot_counts_one_cold_vote_and_an_entry_per_further_voter() -> None:
    paces = serial(6, vote_s=None)
    assert vote_deadline(paces, 4.0) == 1.5 * (UNMEASURED_SERIAL_VOTE_S + 5 * UNMEASURED_JOINT_VOTER_S) + 1.0
    assert vote_deadline(serial(6, vote_s=None, jointly=False), 4.0) == 1.5 * 6 * UNMEASURED_SERIAL_VOTE_S + 1.0


def test_alone_or_with_a_slot_each_the_votes_are_not_joint() -> None:
    assert not joint(serial(1, vote_s=4.0, joint_voter_s=1.0))
    enough = serial(3, vote_s=4.0, joint_voter_s=1.0, slots=4)
    assert not joint(enough)
    assert vote_round_s(enough) == 4.0


def test_the_deadline_counts_a_vote_whose_prompt_the_server_has_not_cached() -> None:
    # Measured on the 0.5B model: prompts read at 960 tokens/s on average (the cache held most of each), 114 when
    # new; the joint vote after another companion's line was new, and took longer than its 7.9 s deadline.
    cached = [Pace("http://127.0.0.1:8080/v1", 1, 2.0, 6.0, joint=True, joint_voter_s=1.0)] * 2
    assert vote_round_s(cached) == 2.0 + 1.0  # what a turn usually waits (direct.py's judgement of a slow round)
    assert vote_deadline(cached, 4.0) == 1.5 * (6.0 + 1.0) + 1.0  # what it may take
