"""Turns without a vote round: a named companion answers at once; on a one-request-at-a-time model server the
likely speaker answers a user's message at once and the others vote on the next line; the vote deadline follows
the endpoints' measured speed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from companions.conversation import Description, Pace
from companions.conversation.deadline import MAX_DEADLINE_S, vote_deadline
from companions.conversation.direct import answer_at_once, likely_speaker, named_companion
from companions.wire.protocol import Message
from tests.companions.conversation_sim import Double, Sim, listens, wants

NAMES = {"akari": ("あかり", "Akari"), "hina": ("ひな", "Hina"), "souta": ("そうた", "Souta")}
EVERYONE = tuple(NAMES)


def user_says(text: str, to: list[str] | None = None) -> Message:
    return Message.create(from_="user", message=text, to=to or [])


def test_a_companion_named_by_to_or_in_the_text_is_found() -> None:
    assert named_companion(user_says("hi", ["hina"]), EVERYONE, NAMES, user_id="user") == "hina"
    assert named_companion(user_says("Akari, what is your favourite star?"), EVERYONE, NAMES, user_id="user") == "akari"
    assert named_companion(user_says("そうたくん、元気？"), EVERYONE, NAMES, user_id="user") == "souta"
    # two names, nobody in particular, a name inside another word, or a companion not present: no shortcut
    assert named_companion(user_says("Akari and Hina, hello"), EVERYONE, NAMES, user_id="user") is None
    assert named_companion(user_says("みなさん、こんにちは！"), EVERYONE, NAMES, user_id="user") is None
    assert named_companion(user_says("I love China"), EVERYONE, NAMES, user_id="user") is None
    assert named_companion(user_says("hi", ["akari", "hina"]), EVERYONE, NAMES, user_id="user") is None
    assert named_companion(user_says("Hina?"), ("akari", "souta"), NAMES, user_id="user") is None


def test_the_likely_speaker_is_deterministic_and_spreads_the_floor() -> None:
    message = user_says("Does anyone know about the stars tonight?")
    personas = {"akari": "loves the stars and the night sky", "hina": "tea and books", "souta": "football"}
    pick = lambda recent, previous=None: likely_speaker(  # noqa: E731
        list(EVERYONE), text=message.params.message, recent_turns=recent, previous_speaker=previous, personas=personas)
    assert pick({}) == "akari"  # the persona shares most words with the message
    assert pick({"akari": 2}) == "hina"  # fewer recent turns first, then the id
    assert pick({}, previous="akari") == "hina"  # the previous speaker steps aside
    assert likely_speaker([], text="", recent_turns={}, previous_speaker=None, personas={}) is None


def test_the_vote_deadline_follows_the_measured_speed() -> None:
    assert vote_deadline([], 4.0) == 4.0
    fast = [Pace("hosted", None, 0.4)] * 3
    assert vote_deadline(fast, 4.0) == 4.0
    assert not answer_at_once(fast, slow_round_s=2.0)
    # three votes queue on one slot of 3 s each: about 9 s, with a margin; never beyond the cap
    serial = [Pace("local", 1, 3.0)] * 3
    assert 13.0 <= vote_deadline(serial, 4.0) <= 15.0
    assert answer_at_once(serial, slow_round_s=2.0)
    assert vote_deadline([Pace("local", 1, 100.0)] * 3, 4.0) == MAX_DEADLINE_S
    # not measured yet on a one-slot server: still longer than the fixed 4 s that lost 6 of 7 votes
    assert vote_deadline([Pace("local", 1, None)] * 3, 4.0) > 20.0
    slow_parallel = [Pace("vllm", 4, 2.5)] * 3
    assert answer_at_once(slow_parallel, slow_round_s=2.0)


@dataclass(eq=False)
class Paced(Double):
    description: Description = field(default_factory=Description)


def paced(name: str, vote_fn: Callable[..., object], say: str, pace: Pace | None, log: list[str]) -> Paced:
    d = Paced(name, vote_fn, lambda t, c, say=say: say, log)  # type: ignore[arg-type]
    d.description = Description(names=NAMES[name], persona="", pace_of=lambda: pace)
    return d


async def test_on_a_serial_server_the_likely_speaker_answers_at_once_and_the_others_vote_next(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    log: list[str] = []
    one_slot = Pace("http://127.0.0.1:8080/v1", 1, None)
    akari = paced("akari", wants(3), "こんにちは！", one_slot, log)
    hina = paced("hina", wants(8), "ひなです、よろしくね。", one_slot, log)
    souta = paced("souta", listens, "やあ。", one_slot, log)
    sim = await sim_factory(akari, hina, souta, turn_cap=2)
    sim.send("みなさん、こんにちは！")
    await sim.ended()
    turns = sim.model.turns()
    assert (turns[0].speaker, turns[0].selection_rule, turns[0].votes) == ("akari", "first", ())
    assert log[0] == "compose:akari"  # nobody voted before the first word
    # the next turn opens on akari's line: hina and souta vote on it, and hina (importance 8) follows
    assert {v.companion for v in turns[1].votes} == {"hina", "souta"}
    assert sim.said() == [("akari", "こんにちは！"), ("hina", "ひなです、よろしくね。")]


async def test_with_parallel_fast_servers_everyone_votes_first(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []
    hosted = Pace("https://api.example/v1", None, 0.3)
    sim = await sim_factory(paced("akari", wants(3), "hi", hosted, log), paced("hina", wants(8), "hello", hosted, log),
                            turn_cap=1)
    sim.send("Hello everyone")
    await sim.ended()
    assert sim.model.turns()[0].selection_rule == "wants"
    assert sim.said() == [("hina", "hello")]


async def test_a_name_in_the_text_gets_its_companion_without_a_vote(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []
    akari, hina = paced("akari", listens, "Sirius!", None, log), paced("hina", wants(9), "me!", None, log)
    sim = await sim_factory(akari, hina, turn_cap=1)
    sim.send("Akari, what is your favourite star?")
    await sim.ended()
    assert not akari.turns
    assert not hina.turns
    assert sim.said() == [("akari", "Sirius!")]
