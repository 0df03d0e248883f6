"""While the conversation is idle, the companion that would answer the user's next message to everyone has its
prompt warmed on its model server; a message cancels a warm-up still waiting, leaves one in flight to finish, and its
turn goes on as usual."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from companions.conversation import Description
from tests.companions.conversation_sim import Double, Sim, listens, wants
from tests.waiting import wait_until

SOON = 0.05


class Warmed(Double):
    """A participant double that records its warm-ups; ``block`` makes a warm-up wait until cancelled."""

    warm_log: list[str]
    block: bool = False
    cancelled: int = 0


def warmed(name: str, vote_fn: Callable[..., object], say: str, warm_log: list[str], *,
           block: bool = False) -> Warmed:
    double = Warmed(name, vote_fn, lambda turn, closing, say=say: say)  # type: ignore[arg-type]
    double.warm_log, double.block, double.cancelled = warm_log, block, 0

    async def warm() -> bool:
        warm_log.append(name)
        if double.block:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                double.cancelled += 1
                raise
        return True

    double.description = Description(names=(name,), warm=warm)  # type: ignore[attr-defined]
    return double


async def test_once_started_the_first_likely_speaker_is_warmed(sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    log: list[str] = []
    await sim_factory(warmed("hina", listens, "", log), warmed("akari", listens, "", log), warm_after_s=SOON)
    await wait_until(lambda: bool(log))
    await asyncio.sleep(3 * SOON)
    assert log == ["akari"]  # nobody spoke yet: the first by id; once, not again and again


async def test_after_a_conversation_the_one_who_spoke_least_lately_is_warmed(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    log: list[str] = []
    akari, hina = warmed("akari", wants(9), "こんばんは！", log), warmed("hina", listens, "", log)
    sim = await sim_factory(akari, hina, turn_cap=1, warm_after_s=SOON, direct_turns=False)
    await wait_until(lambda: log == ["akari"])
    sim.send("みなさん、こんばんは！")
    await sim.ended()
    await wait_until(lambda: len(log) == 2)
    assert log == ["akari", "hina"]  # akari just spoke: hina answers the next message to everyone first


async def test_a_message_leaves_a_warm_up_in_flight_to_finish_and_is_answered_meanwhile(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    """The server evaluates a warm-up's prompt to its end whatever: closing it only threw that work away (measured
    on Madoi's runner: 603 prompt tokens evaluated, the request closed, the reply evaluating them again)."""
    log: list[str] = []
    akari = warmed("akari", wants(5), "はーい！", log, block=True)
    sim = await sim_factory(akari, turn_cap=1, warm_after_s=SOON)
    await wait_until(lambda: log == ["akari"])
    sim.send("あかり、聞こえる？")
    await sim.ended()
    assert akari.cancelled == 0
    assert sim.said() == [("akari", "はーい！")]


async def test_a_message_cancels_a_warm_up_still_waiting_for_its_delay(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    log: list[str] = []
    akari = warmed("akari", wants(5), "はーい！", log)
    sim = await sim_factory(akari, turn_cap=1, warm_after_s=0.5)
    sim.send("あかり、聞こえる？")  # before the first warm-up's delay has passed
    await sim.ended()
    await asyncio.sleep(0.3)  # past the first warm-up's delay, within the next one's
    assert log == []


async def test_a_muted_companion_is_not_warmed_and_nothing_is_warmed_when_turned_off(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    log: list[str] = []
    sim = await sim_factory(warmed("akari", listens, "", log), warmed("hina", listens, "", log), warm_after_s=SOON)
    await wait_until(lambda: log == ["akari"])
    sim.manager.mute("akari")
    sim.send("hello", to=["akari"])  # nobody present and unmuted is addressed: the conversation ends at once
    await sim.ended()
    await wait_until(lambda: len(log) == 2)
    assert log == ["akari", "hina"]
    off: list[str] = []
    await sim_factory(warmed("akari", listens, "", off), warm_after_s=None)  # type: ignore[arg-type]
    await asyncio.sleep(5 * SOON)
    assert off == []


async def test_opening_another_conversation_forgets_the_last_ones_history_and_warms_again(
    sim_factory: Callable[..., Awaitable[Sim]],
) -> None:
    log: list[str] = []
    akari = warmed("akari", wants(9), "こんばんは！", log)
    sim = await sim_factory(akari, turn_cap=1, warm_after_s=SOON, direct_turns=False)
    await wait_until(lambda: log == ["akari"])
    sim.send("みなさん、こんばんは！")
    await sim.ended()
    await wait_until(lambda: len(log) == 2)
    sim.manager.switched()  # the user opened another conversation while nothing ran
    await wait_until(lambda: len(log) == 3)  # warmed again, with the new conversation's context
    sim.send("はじめまして")
    await wait_until(lambda: len(akari.turns) == 2)
    assert [len(t.history) for t in akari.turns] == [1, 1]  # the new turn's history: its own message, nothing older


async def test_a_warm_up_with_no_model_yet_is_not_counted_and_the_next_speaker_is_warmed_once_the_model_is_found(
        sim_factory: Callable[..., Awaitable[Sim]]) -> None:
    found = False
    log: list[str] = []
    double = Double("akari", listens, lambda turn, closing: "")  # type: ignore[arg-type]

    async def warm() -> bool:
        log.append("found" if found else "pending")
        return found  # measured on Madoi's own runner: the warm-up after the start ran while the model still loaded

    double.description = Description(names=("akari",), warm=warm)  # type: ignore[attr-defined]
    sim = await sim_factory(double, warm_after_s=SOON)
    await wait_until(lambda: log == ["pending"])
    assert sim.manager.warm_ups == 0  # nothing was evaluated
    found = True
    sim.manager.models_changed()
    await wait_until(lambda: log == ["pending", "found"])
    await wait_until(lambda: sim.manager.warm_ups == 1)
