"""Speaking first: a turn opened on an occasion (no message), decided by the companions' vote; and the rules of
when the app may ask (a cooldown, a cap per hour, never while the user is busy or the conversation under way)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from companions.conversation.participant import Description
from companions.conversation.speaking_first import (
    CUE_SENDER,
    OCCASION_KINDS,
    FirstWordLimits,
    FirstWordRules,
    Occasion,
    cue,
)
from tests.companions.conversation_sim import Double, Sim, listens, wants

RETURNED = Occasion("returned", at=1000.0, minutes=12)


async def test_the_vote_picks_who_speaks_first_and_one_line_waits_for_the_user(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    akari = Double("akari", wants(8, reason="おかえりって言いたい"), say_fn=lambda turn, closing: "おかえり！")
    hina = Double("hina", wants(3), say_fn=lambda turn, closing: "ひなも！")
    sim = await sim_factory(akari, hina)
    assert await sim.manager.speak_first(RETURNED, cue(RETURNED, "ja"))
    view = await sim.ended()
    assert sim.said() == [("akari", "おかえり！")]  # one line: hina does not answer akari, the user does
    assert view.ended_reason == "spoke-first"
    assert view.turn is not None
    assert view.turn.occasion == RETURNED
    # The cue was told to the companions only: never published (the chat, the store and the network follow the bus).
    assert [m.params.from_ for m in sim.messages] == ["akari"]
    assert akari.turns[0].message.params.from_ == CUE_SENDER
    assert akari.turns[0].message.params.message == "（カメラで気づいたこと：ユーザーが12分ぶりに戻ってきた）"
    assert akari.turns[0].origin == CUE_SENDER  # not the user's turn: tools that reach the user's things ask


async def test_when_everyone_listens_nobody_speaks_first(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    held_up = Occasion("held_up", at=1000.0)
    sim = await sim_factory(Double("akari", listens), Double("hina", listens))
    assert await sim.manager.speak_first(held_up, cue(held_up, "ja"))
    view = await sim.ended()
    assert sim.said() == []
    assert view.ended_reason == "no-speaker"  # an unanswered occasion is not the user's message: nobody must answer


async def test_the_user_coming_back_is_greeted_even_when_every_vote_says_listen(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    """As the user's message is always answered: the real 0.5B model voted listen on every occasion."""
    sim = await sim_factory(Double("akari", listens, say_fn=lambda turn, closing: "おかえり！"),
                            Double("hina", listens, say_fn=lambda turn, closing: "おかえりなさい。"))
    assert await sim.manager.speak_first(RETURNED, cue(RETURNED, "ja"))
    view = await sim.ended()
    assert len(sim.said()) == 1
    assert view.ended_reason == "spoke-first"


async def test_no_turn_opens_while_a_conversation_runs(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    akari = Double("akari", wants(8), say_fn=lambda turn, closing: "うん", hold_speech=True)
    sim = await sim_factory(akari)
    sim.send("あかり、聞いて")
    await akari.speaking.wait()
    assert not await sim.manager.speak_first(RETURNED, cue(RETURNED, "ja"))  # she is still speaking
    akari.release()


async def test_a_companion_elsewhere_never_hears_the_cue(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    remote = Double("kumo", wants(9), say_fn=lambda turn, closing: "hello from elsewhere")
    remote.description = Description(remote=True)  # a participant on another node
    akari = Double("akari", listens)
    sim = await sim_factory(akari, remote)
    assert await sim.manager.speak_first(RETURNED, cue(RETURNED, "en"))
    await sim.ended()
    assert remote.turns == []
    assert len(akari.turns) == 1


def test_the_rules_keep_a_cooldown_a_cap_per_hour_and_never_interrupt_the_user() -> None:
    rules = FirstWordRules(FirstWordLimits(cooldown_s=300, per_hour=3, quiet_s=60))

    def why(now: float, **state: object) -> str | None:
        args: dict[str, object] = {"user_active": False, "under_way": False, "last_message_at": None, **state}
        return rules.refusal(now, **args)  # type: ignore[arg-type]

    assert why(0) is None
    assert "typing or speaking" in (why(0, user_active=True) or "")
    assert "under way" in (why(0, under_way=True) or "")
    assert "last message was 30 s ago" in (why(100, last_message_at=70) or "")
    rules.spoke(0)
    assert "cooldown" in (why(299) or "")
    assert why(300) is None
    rules.spoke(300)
    rules.spoke(600)
    assert "3 times within the hour" in (why(900) or "")
    assert why(3600) is None  # the first of the hour is an hour old


@pytest.mark.parametrize("language", ["ja", "en"])
def test_every_occasion_has_a_cue_in_both_languages(language: str) -> None:
    for kind in OCCASION_KINDS:
        text = cue(Occasion(kind, 0.0, minutes=3), language)
        assert text
        assert "{" not in text
        assert ("3" in text) == (kind in ("returned", "silence"))
