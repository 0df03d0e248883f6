"""What was recalled stays out of a vote on a message from outside the window too (the vote's reason is shown to
everyone, bridge clients and peers included); a vote on the user's own message carries it. Akari and Souta of the
sample cards under the real manager and the app's trust policy (tests/companions/house.py)."""

from __future__ import annotations

import asyncio

import pytest

from companions.llm.scripted import reply_json, say
from companions.memory.recall import CompanionRecall
from companions.testing.scripted_consent import ScriptedUser
from companions.wire.bus import InProcessBus
from companions.wire.protocol import Message
from tests.companions.house import Diary, House


@pytest.mark.parametrize(("sender", "recalled"), [("user", True), ("taro@12D3KooWxyz", False)])
async def test_a_vote_on_a_message_from_outside_carries_nothing_recalled(bus: InProcessBus, sender: str,
                                                                        recalled: bool) -> None:
    user = ScriptedUser()
    house = await House.open(bus, user)
    for companion in house.companions:
        companion.recall = CompanionRecall(companion.id, Diary())
    for name in ("akari", "souta"):  # both listen
        house.models[name].lane("vote").add(reply_json({"state": "listen", "importance": 1, "reason": "nothing"}))
    if sender == "user":  # the user's own message is answered all the same, by the likely speaker (akari); her
        # line goes to souta too, who is then asked directly and answers (the house's turn cap is 2)
        params = {"akari": {"wants_to_see": False}, "souta": {"needs_facts": False}}
        for name, line in (("akari", "I don't know it, sorry."), ("souta", "Nor do I.")):
            house.models[name].add(say(line))
            house.models[name].lane("event_params").add(
                reply_json({"already_replied": False, "need_response": True, **params[name]}))
        house.models["souta"].lane("vote").add(reply_json({"state": "listen", "importance": 1, "reason": "nothing"}))
    bus.publish(Message.create(from_=sender, message="Does anyone know my diary's password?", to=[]))
    await asyncio.wait_for(house.ended.wait(), 20)
    await bus.drain()
    for name in ("akari", "souta"):
        prompt = "\n".join(m.text for m in house.models[name].requests_in("vote")[0].messages)
        assert ("hoshizora" in prompt) is recalled
    assert user.asked == []
    await house.aclose()
