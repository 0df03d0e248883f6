"""Selection: one deterministic, order-independent function of the votes that follows the floor rules."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from companions.conversation.ballot import Vote
from companions.conversation.selection import select_speaker

IDS = ["aoi", "ben", "chika", "dai", "emi"]


def v(state: str = "speak", importance: int = 5, selected: bool = False) -> Vote:
    return Vote(state=state, importance=importance, selected=selected)  # type: ignore[arg-type]


def test_selected_beats_speak_and_importance_orders_the_rest() -> None:
    votes = {"aoi": v(importance=9), "ben": v("listen", 2, selected=True), "chika": v(importance=7)}
    assert select_speaker(votes).ranking == ("ben", "aoi", "chika")


def test_nobody_wants_to_speak() -> None:
    result = select_speaker({"aoi": v("listen", 9), "ben": v("listen", 3)})
    assert result.speaker is None
    assert "nobody" in result.reason
    assert result.rule == "nobody"


def test_ties_go_to_fewer_recent_turns_then_id() -> None:
    votes = {c: v(importance=6) for c in ("dai", "aoi", "ben")}
    assert select_speaker(votes).speaker == "aoi"
    assert select_speaker(votes, recent_turns={"aoi": 2, "ben": 1}).speaker == "dai"
    assert select_speaker(votes, recent_turns={"aoi": 1, "dai": 1}).speaker == "ben"


def test_previous_speaker_is_not_picked_twice_unless_named_or_alone() -> None:
    votes = {"aoi": v(importance=9), "ben": v(importance=1)}
    stepped_aside = select_speaker(votes, previous_speaker="aoi")
    assert (stepped_aside.speaker, stepped_aside.rule) == ("ben", "spread")
    alone = select_speaker({"aoi": v(importance=9)}, previous_speaker="aoi")
    assert (alone.speaker, alone.rule) == ("aoi", "wants")
    named = {"aoi": v(importance=9, selected=True), "ben": v(importance=9)}
    again = select_speaker(named, previous_speaker="aoi")
    assert (again.speaker, again.rule) == ("aoi", "named")


def test_forced_speaker_leads_only_when_eligible() -> None:
    votes = {"aoi": v(importance=9), "ben": v("listen", 0)}
    assert select_speaker(votes, forced="ben").ranking == ("ben", "aoi")
    assert select_speaker(votes, forced="ben").rule == "forced"
    assert select_speaker(votes, forced="ben", eligible=frozenset({"aoi"})).speaker == "aoi"
    assert select_speaker(votes, eligible=frozenset({"ben"})).speaker is None


votes_strategy = st.dictionaries(
    st.sampled_from(IDS),
    st.builds(Vote, state=st.sampled_from(["speak", "listen"]), importance=st.integers(0, 10),
              selected=st.booleans()),
    max_size=len(IDS),
)


@settings(max_examples=300, deadline=None)
@given(
    votes=votes_strategy,
    recent=st.dictionaries(st.sampled_from(IDS), st.integers(0, 5)),
    previous=st.none() | st.sampled_from(IDS),
    seed=st.integers(0, 2**32 - 1),
)
def test_selection_is_deterministic_order_independent_and_obeys_the_rules(
    votes: dict[str, Vote], recent: dict[str, int], previous: str | None, seed: int
) -> None:
    result = select_speaker(votes, recent_turns=recent, previous_speaker=previous)
    shuffled_items = list(votes.items())
    random.Random(seed).shuffle(shuffled_items)
    again = select_speaker(dict(shuffled_items), recent_turns=dict(recent), previous_speaker=previous)
    assert again == result  # same votes, any arrival order -> same ranking, same speaker

    candidates = {c for c, vote in votes.items() if vote.selected or vote.state == "speak"}
    assert set(result.ranking) == candidates
    if not candidates:
        assert result.speaker is None
        return
    speaker = result.speaker
    assert speaker is not None
    chosen = votes[speaker]
    if speaker == previous:  # never twice in a row unless named or alone
        assert chosen.selected or len(candidates) == 1
    others = [votes[c] for c in candidates if c != previous or votes[c].selected]
    if any(o.selected for o in others):
        assert chosen.selected  # selected before speak
    for c in candidates - {speaker}:
        rival = votes[c]
        if c == previous and not rival.selected:
            continue  # the previous speaker was set aside
        if rival.selected == chosen.selected and rival.state == chosen.state:
            assert chosen.importance >= rival.importance  # then by importance
            if chosen.importance == rival.importance:  # ties: fewer recent turns, then id
                assert (recent.get(speaker, 0), speaker) < (recent.get(c, 0), c)
