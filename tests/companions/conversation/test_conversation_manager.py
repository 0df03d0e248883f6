"""Conversation simulations on the Participant port: turns, deadline, ties, interrupt, control, pacing, closing.

The participants here are doubles of the port (the manager's only dependency besides the real bus); votes of real
companions on scripted models are in test_conversation_votes.py. Deadlines are half a
second and every wait is on an event, never on a sleep.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

from companions.conversation import (
    TurnContext,
    Vote,
)
from companions.conversation.commands import ConversationControl
from companions.wire.protocol import Closing, Message
from tests.companions.conversation_sim import Double, SayFn, Sim, VoteFn, listens, wants


def heard(turn: TurnContext) -> int:
    """How many companion messages this participant heard (a simple clock for closing)."""
    return sum(1 for m in turn.history if m.params.from_ != "user")


async def test_a_natural_exchange_closes_by_itself(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []

    def stage(turn: TurnContext) -> Closing:
        n = heard(turn)
        return "none" if n < 2 else "pre-closing" if n < 3 else "closing" if n < 4 else "terminal"

    def voter(importance: int) -> VoteFn:
        return lambda turn: Vote(state="speak", importance=importance, closing=stage(turn),
                                 reason=f"turn {heard(turn)}")

    def say(name: str) -> SayFn:
        def line(turn: TurnContext, closing: Closing) -> str:
            return f"{name}: goodbye!" if closing == "terminal" else f"{name} on {turn.message.params.message[:12]}"

        return line

    people = [Double(n, voter(i), say(n), log) for n, i in (("aoi", 7), ("ben", 5), ("chika", 6))]
    sim = await sim_factory(*people)
    opening = sim.send("Hello everyone, what shall we cook tonight?")
    view = await sim.ended()

    assert view.ended_reason == "closed"
    assert view.closing == "terminal"
    said = sim.said()
    assert len(said) == 5
    assert said[-1][1].endswith("goodbye!")
    assert said[0][0] == "aoi"  # highest importance answers the user first
    assert all(a[0] != b[0] for a, b in itertools.pairwise(said))  # nobody twice in a row
    first_turn_states = [s for s in sim.states if s.params.messageId == opening.params.id]
    assert {s.params.from_ for s in first_turn_states} == {"aoi", "ben", "chika"}  # from = the voter, per turn
    turns = sim.model.turns()
    assert turns[0].turn_id == opening.params.id
    assert turns[0].speaker == "aoi"
    assert turns[0].vote_of("ben") is not None
    assert turns[0].vote_of("ben").reason == "turn 0"
    assert view.floor is None
    assert not sim.manager.running


async def test_a_companion_that_never_votes_cannot_stall_the_turn(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    async def never(turn: TurnContext) -> Vote:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def ignores_cancel(turn: TurnContext) -> Vote:
        for _ in range(2):  # swallows the first cancellation, like a badly written client
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                continue
        return Vote(state="speak", importance=10)

    aoi = Double("aoi", never)
    ben = Double("ben", ignores_cancel)
    chika = Double("chika", wants(3), lambda turn, closing: "I'll answer." if heard(turn) == 0 else None)
    dai = Double("dai", listens)
    sim = await sim_factory(aoi, ben, chika, dai, turn_cap=1)
    sim.send("Anyone there?")
    view = await sim.ended(timeout=2.0)
    assert sim.said() == [("chika", "I'll answer.")]
    first = sim.model.turns()[0]
    assert first.vote_of("aoi").status == "missing"  # type: ignore[union-attr]
    assert first.vote_of("ben").status == "missing"  # type: ignore[union-attr]
    assert first.vote_of("dai").status == "voted"  # type: ignore[union-attr]
    assert view.ended_reason == "turn-cap"


async def test_invalid_votes_count_as_listen(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    def broken(turn: TurnContext) -> Vote:
        raise ValueError("model returned garbage")

    def wrong_type(turn: TurnContext) -> Vote:
        return {"state": "speak"}  # type: ignore[return-value]

    sim = await sim_factory(Double("aoi", broken), Double("ben", wrong_type), Double("chika", listens), turn_cap=1)
    sim.send("Hi")
    await sim.ended()
    first = sim.model.turns()[0]
    votes = {v.companion: v for v in first.votes}
    assert votes["aoi"].status == "invalid"
    assert "garbage" in votes["aoi"].error
    assert votes["ben"].status == "invalid"
    assert votes["ben"].state == "listen"
    # Nobody asked for the floor, yet the user's own message is answered (by the likely speaker: first by id here).
    assert first.selection_rule == "answers-user"
    assert sim.said() == [("aoi", "hmm")]


async def test_the_users_message_is_answered_when_everyone_listens_but_a_companions_line_is_not(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    sim = await sim_factory(Double("aoi", listens, lambda t, c: "Hello!"), Double("ben", listens,
                                                                                lambda t, c: "Hi there"))
    sim.send("Good evening")
    view = await sim.ended()
    assert sim.said() == [("aoi", "Hello!")]  # the user is answered once, by the likely speaker
    assert view.ended_reason == "no-speaker"  # aoi's line, which everyone listens to, is not


async def test_ties_are_deterministic_whatever_the_arrival_order(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    winners = []
    for delays in ((0.0, 0.01, 0.02), (0.02, 0.01, 0.0)):
        def delayed(d: float) -> VoteFn:
            async def vote(turn: TurnContext) -> Vote:
                await asyncio.sleep(d)  # simulated model latency: decides the arrival order of the votes
                return Vote(state="speak", importance=5)

            return vote

        names = ("ben", "chika", "dai")
        people = [Double(n, delayed(d), lambda t, c, n=n: f"{n} speaks") for n, d in zip(names, delays, strict=True)]
        sim = await sim_factory(*people, turn_cap=3, vote_deadline_s=0.5)
        sim.send("Who goes first?")
        view = await sim.ended()
        assert view.ended_reason == "turn-cap"
        winners.append([who for who, _ in sim.said()])
    # same votes -> same speakers; ties go to fewer recent turns, then id: the floor is spread
    assert winners[0] == winners[1] == ["ben", "chika", "dai"]


async def test_the_user_interrupts_mid_speech(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []
    aoi = Double("aoi", wants(8), lambda t, c: "A long story about my trip...", log, hold_speech=True)
    ben = Double("ben", wants(4), lambda t, c: f"ben replies to {t.message.params.message}", log)
    sim = await sim_factory(aoi, ben)
    sim.send("Tell me about your trip")
    await asyncio.wait_for(aoi.speaking.wait(), 2.0)
    # ben is chosen and composes while aoi speaks, but must not publish before aoi's speech ends
    await sim.model.wait_for(lambda v: v.turn is not None and v.turn.phase == "waiting" and v.turn.speaker == "ben")
    assert sim.said() == [("aoi", "A long story about my trip...")]
    assert sim.model.view.floor == "aoi"
    aoi.vote_fn, aoi.hold_speech = listens, False
    ben.say_fn = lambda t, c: "Sure, ask."
    ben.vote_fn = lambda t: Vote(state="listen", importance=0, selected=True)
    interrupt = sim.send("Stop, wait! Ben, one question", to=["ben"])
    view = await sim.model.wait_for(lambda v: v.turn is not None and v.turn.turn_id == interrupt.params.id)
    assert aoi.interrupts == 1
    assert not aoi.spoken
    assert "interrupt:ben" in log  # ben's pending line was dropped, and ben was told
    view = await sim.ended()
    assert sim.said() == [("aoi", "A long story about my trip..."), ("ben", "Sure, ask.")]
    assert view.ended_reason == "no-speaker"  # aoi was not addressed; ben's answer asks nobody to follow
    cancelled = [t for t in sim.model.turns() if t.phase == "cancelled"]
    assert len(cancelled) == 1
    assert cancelled[0].speaker == "ben"


async def test_mute_and_force(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    aoi = Double("aoi", wants(9), lambda t, c: "aoi talks")
    ben = Double("ben", listens, lambda t, c: "ben was asked")
    chika = Double("chika", wants(2), lambda t, c: "chika talks")
    sim = await sim_factory(aoi, ben, chika, turn_cap=1)
    sim.control.mute("aoi")
    await sim.model.wait_for(lambda v: v.muted == ("aoi",))
    sim.send("Hi all")
    view = await sim.ended()
    assert sim.said() == [("chika", "chika talks")]
    assert not aoi.turns  # a muted companion is not even asked to vote
    refused = await sim.manager.force_next("aoi")
    assert not refused.ok
    assert "muted" in refused.detail
    sim.control.mute("aoi", muted=False)
    sim.control.force("ben")  # idle: the conversation resumes with ben, who voted listen
    view = await sim.model.wait_for(lambda v: v.status == "ended" and len(sim.said()) == 2)
    assert sim.said()[-1] == ("ben", "ben was asked")
    assert view.forced_next is None
    assert [(t.selection_rule, t.selection_reason) for t in sim.model.turns() if t.speaker == "ben"] == [
        ("forced", "ben was asked to speak next")]
    sim.send("And now?")
    await sim.model.wait_for(lambda v: v.status == "ended" and len(sim.said()) == 3)
    assert sim.said()[-1] == ("aoi", "aoi talks")  # unmuted: the most eager speaks again


async def test_a_runaway_pair_is_closed_by_the_repetition_detector(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    lines = {"aoi": "そうですね、本当にそう思います!", "ben": "本当にそうですね、そう思います。"}
    aoi = Double("aoi", wants(6), lambda t, c: lines["aoi"] if c != "terminal" else "じゃあ、またね!")
    ben = Double("ben", wants(6), lambda t, c: lines["ben"] if c != "terminal" else "またね!")
    sim = await sim_factory(aoi, ben, turn_cap=50)
    sim.send("ねえ、どう思う?")
    view = await sim.ended()
    assert view.ended_reason == "closed"
    said = [text for _, text in sim.said()]
    assert len(said) <= 6
    assert said[-1] in ("じゃあ、またね!", "またね!")
    assert max(c.view.repetition for c in sim.model.changes) > 0.6
    assert view.closing == "terminal"
    assert "aoi" in view.ended_detail
    hints = [t.closing_hint for t in aoi.turns + ben.turns]
    assert "pre-closing" in hints or "closing" in hints  # votes were told to move toward closing


async def test_a_runaway_pair_is_stopped_by_the_turn_cap(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    counter = iter(range(1000))
    topics = ["volcanoes", "trains", "pasta", "jazz", "moss", "kites", "owls", "tea", "rain", "maps"]

    def fresh(turn: TurnContext, closing: Closing) -> str:
        return f"Fact #{next(counter)} about {topics[len(turn.history) % len(topics)]} {'x' * len(turn.history)}"

    sim = await sim_factory(Double("aoi", wants(6), fresh), Double("ben", wants(6), fresh), turn_cap=4)
    sim.send("Talk among yourselves")
    view = await sim.ended()
    assert view.ended_reason == "turn-cap"
    assert view.turns_taken == 4
    assert [who for who, _ in sim.said()] == ["aoi", "ben", "aoi", "ben"]


async def test_stop_from_outside_cuts_speech_and_says_why(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    aoi = Double("aoi", wants(5), lambda t, c: "la la la", hold_speech=True)
    sim = await sim_factory(aoi, Double("ben", wants(4)))
    sim.send("Sing!")
    await asyncio.wait_for(aoi.speaking.wait(), 2.0)
    sim.control.stop_conversation()
    view = await sim.ended()
    assert view.ended_reason == "stopped"
    assert view.floor is None
    assert aoi.interrupts == 1
    assert not sim.manager.running
    assert (await sim.manager.stop_conversation()).ok is False  # nothing left to stop


async def test_interrupt_without_a_message_cuts_speech_and_the_next_speaker_and_waits_for_the_user(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []
    aoi = Double("aoi", wants(8), lambda t, c: "A very long song...", log, hold_speech=True)
    ben = Double("ben", wants(4), lambda t, c: "ben's answer", log)
    sim = await sim_factory(aoi, ben)
    sim.send("Sing for us")
    await asyncio.wait_for(aoi.speaking.wait(), 2.0)
    await sim.model.wait_for(lambda v: v.turn is not None and v.turn.phase == "waiting" and v.turn.speaker == "ben")
    sim.control.interrupt()
    view = await sim.ended()
    assert view.ended_reason == "interrupted"
    assert view.ended_detail == "interrupted by the user"
    assert view.floor is None
    assert not aoi.spoken  # cut off mid-song
    assert sim.said() == [("aoi", "A very long song...")]  # ben's composed answer was dropped, not said
    assert {"interrupt:aoi", "interrupt:ben"} <= set(log)
    assert (await sim.manager.interrupt()).ok is False  # nothing left to interrupt
    aoi.vote_fn, aoi.hold_speech = listens, False
    sim.send("Ben, your turn", to=["ben"])  # the user's message opens a new turn as usual
    view = await sim.model.wait_for(lambda v: v.status == "ended" and len(sim.said()) == 2)
    assert sim.said()[-1] == ("ben", "ben's answer")


async def test_pacing_next_speaker_thinks_during_speech_but_never_two_turns_ahead(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    log: list[str] = []
    people = [Double(n, wants(5), lambda t, c, n=n: f"{n}!", log, hold_speech=True) for n in ("aoi", "ben", "chika")]
    sim = await sim_factory(*people, turn_cap=3)
    sim.send("Go")
    for i, p in enumerate(people):
        await asyncio.wait_for(p.speaking.wait(), 2.0)
        nxt = people[(i + 1) % 3]
        if i < 2:  # the next speaker composes while p speaks, then waits for the floor
            await sim.model.wait_for(lambda v, nxt=nxt: v.turn is not None and v.turn.speaker == nxt.id
                                     and v.turn.phase == "waiting")
            assert sum(e.startswith("compose:") for e in log) == i + 2  # one turn ahead, never two
            assert sim.said()[-1][0] == p.id
        p.release()
    view = await sim.ended()
    assert view.ended_reason == "turn-cap"
    speak_events = [e for e in log if e.startswith(("speak:", "spoken:"))]
    assert speak_events == ["speak:aoi", "spoken:aoi", "speak:ben", "spoken:ben", "speak:chika", "spoken:chika"]
    assert log.index("compose:ben") < log.index("spoken:aoi")  # thinking overlapped the previous speech


async def test_a_speaker_that_fails_to_compose_passes_the_floor(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    def crash(turn: TurnContext, closing: Closing) -> str:
        raise RuntimeError("card expression failed")

    sim = await sim_factory(Double("aoi", wants(9), crash), Double("ben", wants(3), lambda t, c: "ben saves the day"),
                            turn_cap=1)
    sim.send("Hello")
    view = await sim.ended()
    assert sim.said() == [("ben", "ben saves the day")]
    assert view.ended_reason == "turn-cap"
    first = sim.model.turns()[0]  # the view says who could not answer: the rule ranked aoi first, not ben
    assert (first.speaker, first.selection_rule, first.passed_over) == ("ben", "wants", ("aoi",))


async def test_a_message_to_one_companion_is_answered_by_it_without_a_vote(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    composed: list[TurnContext] = []
    aoi = Double("aoi", wants(1), lambda t, c: composed.append(t) or "yes?")
    ben = Double("ben", wants(9))
    sim = await sim_factory(aoi, ben, turn_cap=1)
    sim.send("Aoi, a question", to=["aoi"])
    await sim.ended()
    assert not ben.turns
    assert not aoi.turns
    assert composed[0].addressed_directly
    first = sim.model.turns()[0]
    assert (first.speaker, first.selection_rule, first.votes) == ("aoi", "named", ())
    assert sim.said() == [("aoi", "yes?")]
    message = sim.messages[-1]
    assert message.params.to == ["ben", "user"]  # everyone else present and the user, set by the framework


async def test_a_companion_only_hears_what_was_said_while_present(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    aoi = Double("aoi", wants(5), lambda t, c: "noted")
    sim = await sim_factory(aoi, Double("ben", listens), turn_cap=1)
    sim.send("The secret plan is at noon")
    await sim.ended()
    chika = Double("chika", listens)
    sim.manager.add_participant(chika)
    sim.send("Hello again")
    await sim.model.wait_for(lambda v: v.status == "ended" and len(chika.turns) == 1)
    heard_by_chika = [m.params.message for m in chika.turns[0].history]
    assert heard_by_chika == ["Hello again"]
    assert "The secret plan is at noon" in [m.params.message for m in aoi.turns[-1].history]
    sim.manager.remove_participant("aoi")
    sim.send("Who is here?")
    view = await sim.model.wait_for(lambda v: v.status == "ended" and len(chika.turns) == 2)
    assert view.present == ("ben", "chika")
    assert {v.companion for v in [t for t in sim.model.turns() if t.votes][-1].votes} == {"ben", "chika"}


def test_very_long_messages_are_compared_on_a_bounded_prefix() -> None:
    from companions.conversation.closing import MAX_CHARS, RepetitionDetector, normalize

    huge = "あいうえおかきくけこ" * 10_000
    assert len(normalize(huge)) == MAX_CHARS
    detector = RepetitionDetector()
    detector.observe(huge)
    assert detector.observe(huge + "違う結末").similarity == 1.0  # same prefix: a repeat, found in bounded work


async def test_a_burst_of_user_messages_leaves_one_conversation(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    async def slow_vote(turn: TurnContext) -> Vote:
        await asyncio.sleep(0.01)  # simulated model latency, so that the burst lands mid-vote
        return Vote(state="speak", importance=5)

    people = [Double(n, slow_vote, lambda t, c: f"re: {t.message.params.message}") for n in
              ("aoi", "ben", "chika", "dai", "emi")]
    sim = await sim_factory(*people, turn_cap=1, vote_deadline_s=0.5)
    for i in range(5):
        sim.send(f"message {i}")
    view = await sim.ended()
    assert view.ended_reason == "turn-cap"
    assert [text for _, text in sim.said()] == ["re: message 4"]  # only the latest message got an answer
    assert sim.manager.running is False


async def test_a_companion_message_from_elsewhere_is_heard_but_does_not_fork(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    aoi = Double("aoi", wants(5), lambda t, c: "aoi talks", hold_speech=True)
    ben = Double("ben", wants(4), lambda t, c: "ben talks")
    sim = await sim_factory(aoi, ben, turn_cap=2)
    sim.send("Start")
    await asyncio.wait_for(aoi.speaking.wait(), 2.0)
    sim.bus.publish(Message.create(from_="ben", message="(ben, from a bridge client)", to=["aoi"]))
    await sim.bus.drain()
    assert sim.manager.running
    aoi.release()
    view = await sim.ended()
    assert view.ended_reason == "turn-cap"
    assert [who for who, _ in sim.said()] == ["aoi", "ben", "ben"]  # the outside message, then the one thread
    assert aoi.interrupts == 0


# -- the user's commands: calls on one ConversationControl (user_commands.py) -----------------------------------
async def test_an_edit_stops_the_turn_built_on_the_old_words_and_the_next_turn_hears_the_new_ones(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    aoi = Double("aoi", wants(5), lambda t, c: "la la la", hold_speech=True)
    sim = await sim_factory(aoi)
    asked = sim.send("Sing about rain")
    await asyncio.wait_for(aoi.speaking.wait(), 2.0)
    outcome = await sim.control.edit(asked.params.id, "Sing about snow")
    assert outcome.ok
    view = await sim.ended()
    assert view.ended_reason == "stopped"  # the song on the old words was cut
    assert aoi.interrupts == 1
    aoi.hold_speech = False
    sim.send("Again?")
    await sim.model.wait_for(lambda v: v.status == "ended" and len(aoi.turns) == 2)
    assert [m.params.message for m in aoi.turns[-1].history][:1] == ["Sing about snow"]


async def test_commands_are_obeyed_in_the_order_they_were_made_and_say_what_they_did(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    aoi = Double("aoi", wants(9), lambda t, c: "aoi talks")
    ben = Double("ben", listens, lambda t, c: "ben was asked")
    sim = await sim_factory(aoi, ben, turn_cap=1)
    sim.send("Hi all")
    await sim.ended()
    said = sim.said()[-1]
    # Regenerate: the last line goes, then its speaker answers again; made at once, obeyed in that order.
    deleted = sim.control.edit(sim.messages[-1].params.id, None)
    forced = sim.control.force("ben")
    assert (await deleted).ok
    assert (await forced).detail == "ben speaks next"
    await sim.model.wait_for(lambda v: v.status == "ended" and sim.said()[-1] == ("ben", "ben was asked"))
    assert said == ("aoi", "aoi talks")
    muted = await sim.control.mute("aoi")
    refused = await sim.control.force("aoi")
    assert (muted.ok, refused.ok, refused.detail) == (True, False, "aoi is muted; unmute it first")
    away = await sim.control.set_present("ben", False)  # not one of this app's companions (a double)
    assert not away.ok
    assert "ben" in sim.manager.present
    assert not (await sim.control.interrupt()).ok  # nothing was running


async def test_a_failing_command_is_a_failed_outcome_and_the_next_one_is_obeyed(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    sim = await sim_factory(Double("aoi", wants(5)))

    async def broken(message_id: str, text: str | None) -> None:
        raise RuntimeError("no conversation is open")

    control = ConversationControl(sim.manager, revise=broken)
    await control.start()
    try:
        failed = control.edit("m1", "x")
        muted = control.mute("aoi")
        assert (await failed).detail == "edit failed: no conversation is open"
        assert (await muted).ok
        assert sim.manager.view.muted == ("aoi",)
    finally:
        await control.stop()


async def test_another_conversation_starts_the_view_afresh_and_its_turns_count_from_one(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    sim = await sim_factory(Double("aoi", wants(5), lambda t, c: "aoi talks"), turn_cap=1)
    sim.send("Hi")
    await sim.ended()
    sim.send("Again")
    ended = await sim.model.wait_for(lambda v: v.status == "ended" and len(sim.said()) == 2)
    assert ended.turn is not None
    assert ended.turn.number > 1
    sim.manager.switched()  # the user opened another conversation
    fresh = await sim.model.wait_for(lambda v: v.status == "idle")
    assert (fresh.turn, fresh.ended_reason, fresh.turns_taken) == (None, None, 0)
    assert sim.model.turns() == []
    sim.send("Hello in the new one")
    view = await sim.model.wait_for(lambda v: v.status == "ended" and len(sim.said()) == 3)
    assert [t.number for t in sim.model.turns()] == [1, 2]  # the turn on the message, then the one on aoi's line
    assert view.turn is not None
