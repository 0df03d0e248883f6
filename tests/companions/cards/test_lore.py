"""A companion's lorebook (an imported character card's) comes into its prompt when a keyword is said."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from companions.cards.card import CompanionCard, LoreEntry
from companions.cards.lore import lore_block, triggered
from companions.companion.companion import Companion
from companions.llm.scripted import Matcher, ScriptedModel, call
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message
from companions.wire.query_broker import QueryBroker

SHOP = LoreEntry(keys=["古本屋", "Bookshop"], content="さくらの店は三条通りにある。")
CAT = LoreEntry(keys=["猫"], content="店には三毛猫のタマがいる。", enabled=False)
RAIN = LoreEntry(keys=["rain"], content="It always rains on Tuesdays in the glade.")
CARD = CompanionCard.model_validate({"metadata": {"id": "sakura", "name": "さくら"}, "role": "古本屋の店番。",
                                     "lore": [SHOP.model_dump(), CAT.model_dump(), RAIN.model_dump()]})


def test_entries_come_up_by_keyword_case_insensitively_and_switched_off_ones_never() -> None:
    assert triggered(CARD.lore, ["その古本屋、猫いる？"]) == [SHOP]
    assert triggered(CARD.lore, ["Is the BOOKSHOP open when it RAINs?"]) == [SHOP, RAIN]
    assert triggered(CARD.lore, ["こんにちは"]) == []
    always = LoreEntry(keys=[], content="さくらは左利き。", constant=True)
    assert triggered([*CARD.lore, always], ["こんにちは"]) == [always]  # a constant entry: whatever is said
    block = lore_block(CARD.lore, ["bookshop?", "rain"], "en", budget_chars=30)
    assert block == "What you know (it came up):\n- さくらの店は三条通りにある。"  # the budget keeps the first


@pytest.fixture
async def broker() -> AsyncIterator[tuple[InProcessBus, QueryBroker]]:
    bus = InProcessBus()
    broker = QueryBroker(bus)
    await broker.start()
    yield bus, broker
    await broker.aclose()
    await bus.aclose()


def _prompt_holds(text: str, present: bool) -> Matcher:
    def test(request: object) -> bool:
        return any(text in m.text for m in request.messages) == present  # type: ignore[attr-defined]

    return Matcher(f"the prompt {'holds' if present else 'lacks'} {text!r}", test)


async def test_a_companion_knows_its_lore_when_it_comes_up(broker: tuple[InProcessBus, QueryBroker]) -> None:
    bus, queries = broker
    model = ScriptedModel("sakura")
    model.add(call("speak", {"message": "三条通りだよ。"}, expect=_prompt_holds("三条通りにある", True)),
              call("speak", {"message": "こんにちは！"}, expect=_prompt_holds("三条通りにある", False)))
    sakura = Companion(CARD, model, bus=bus, queries=queries, language="ja")
    asked = await sakura.compose(Message.create(from_="user", message="古本屋はどこ？", to=["sakura"]))
    assert asked is not None
    assert asked.text == "三条通りだよ。"
    greeted = await sakura.compose(Message.create(from_="user", message="こんにちは", to=["sakura"]))
    assert greeted is not None
    model.assert_used_up()
