"""The scripted ChatModel: answers in order, records requests, and is loud about surprises and leftovers."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from companions.llm.scripted import (
    ScriptedCast,
    ScriptedModel,
    ScriptError,
    asks_json,
    call,
    calls,
    fail,
    last_message_mentions,
    offers_tools,
    reply_json,
    say,
    stall,
)
from companions.llm.structured import StructuredStats, generate_structured
from companions.llm.types import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    Completion,
    JsonSchemaFormat,
    LLMError,
    TextDelta,
    ToolSpec,
    complete,
)

HELLO = ChatRequest(messages=(ChatMessage.user("hello"),))
SPEAK = ToolSpec(name="speak")


class Vote(BaseModel):
    state: str
    importance: int


def test_it_is_a_chat_model() -> None:
    model: ChatModel = ScriptedModel("alice")
    assert model.name == "alice"


async def test_steps_answer_in_order_and_requests_are_recorded() -> None:
    model = ScriptedModel("alice", say("Hi there", chunks=["Hi ", "there"]), call("speak", {"text": "やあ"}))
    events = [e async for e in model.stream(HELLO)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hi ", "there"]
    assert isinstance(events[-1], Completion)
    assert events[-1].message.text == "Hi there"
    second = await complete(model, ChatRequest(messages=(ChatMessage.user("again"),), tools=(SPEAK,)))
    assert second.finish_reason == "tool_calls"
    assert second.message.tool_calls[0].name == "speak"
    assert json.loads(second.message.tool_calls[0].arguments) == {"text": "やあ"}
    assert [r.messages[-1].text for r in model.requests] == ["hello", "again"]
    model.assert_used_up()


async def test_several_tool_calls_and_raw_arguments() -> None:
    model = ScriptedModel("a", calls(("speak", {"text": "x"}), ("gesture", '{"name": "wave"'), text="so"))
    completion = await complete(model, HELLO)
    assert [c.name for c in completion.message.tool_calls] == ["speak", "gesture"]
    assert completion.message.tool_calls[1].arguments == '{"name": "wave"'  # verbatim, invalid on purpose
    assert len({c.id for c in completion.message.tool_calls}) == 2


async def test_an_unexpected_call_fails_loudly_even_if_caught() -> None:
    model = ScriptedModel("alice", say("only one"))
    await complete(model, HELLO)
    with pytest.raises(ScriptError, match="unexpected call #2"):
        await complete(model, HELLO)
    with pytest.raises(ScriptError, match="unexpected call #2"):
        model.assert_used_up()  # remembered, so a caller that swallowed it cannot hide it


async def test_script_errors_are_not_llm_errors() -> None:
    model = ScriptedModel("alice")
    with pytest.raises(ScriptError) as info:
        await complete(model, HELLO)
    assert not isinstance(info.value, LLMError)


async def test_unused_steps_fail_at_close() -> None:
    model = ScriptedModel("alice", say("one"), say("two"))
    await complete(model, HELLO)
    with pytest.raises(ScriptError, match="1 unused step"):
        await model.aclose()


async def test_expectations_check_the_request() -> None:
    model = ScriptedModel("alice", call("speak", {}, expect=offers_tools("speak")), say("x", expect=asks_json("vote")))
    await complete(model, ChatRequest(messages=HELLO.messages, tools=(SPEAK,)))
    with pytest.raises(ScriptError, match="asks for JSON vote"):
        await complete(model, HELLO)
    custom = ScriptedModel("bob", say("ok", expect=last_message_mentions("天気")))
    with pytest.raises(ScriptError, match="did not match"):
        await complete(custom, HELLO)


async def test_errors_delays_and_stalls() -> None:
    model = ScriptedModel("alice", fail("server down", retryable=True, status=503), stall(text_first="thinking"))
    with pytest.raises(LLMError, match="server down") as info:
        await complete(model, HELLO)
    assert info.value.retryable
    assert info.value.status == 503
    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream(HELLO):
            if isinstance(event, TextDelta):
                got_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    model.assert_used_up()


async def test_lanes_keep_votes_apart_from_turns() -> None:
    alice = ScriptedModel("alice")
    alice.lane("vote").always(reply_json(Vote(state="listen", importance=1)))
    alice.add(say("first turn"), say("second turn"))
    stats = StructuredStats()
    default = Vote(state="listen", importance=0)
    # Interleaved in any order, votes never eat the turns' steps.
    vote1 = await generate_structured(
        alice, [ChatMessage.user("vote?")], Vote, default=default, counter=stats, name="vote"
    )
    turn1 = await complete(alice, HELLO)
    vote2 = await generate_structured(
        alice, [ChatMessage.user("vote?")], Vote, default=default, counter=stats, name="vote"
    )
    turn2 = await complete(alice, HELLO)
    assert vote1 == vote2 == Vote(state="listen", importance=1)
    assert [turn1.message.text, turn2.message.text] == ["first turn", "second turn"]
    assert len(alice.requests_in("vote")) == 2
    assert stats.fallbacks == 0
    alice.assert_used_up()


async def test_an_unscripted_purpose_falls_to_the_main_lane() -> None:
    model = ScriptedModel("a", reply_json({"state": "speak", "importance": 5}))
    fmt = JsonSchemaFormat(name="vote", schema_={})
    completion = await complete(model, ChatRequest(messages=HELLO.messages, response_format=fmt))
    assert json.loads(completion.message.text)["state"] == "speak"


async def test_a_cast_checks_every_companion() -> None:
    cast = ScriptedCast("alice", "bob", "carol")
    for name in cast:
        cast[name].lane("vote").add(reply_json({"state": "speak", "importance": 3}))
    cast["alice"].add(say("I'll go first"))
    for model in cast.values():
        await generate_structured(
            model, [ChatMessage.user("?")], Vote, default=Vote(state="listen", importance=0), name="vote"
        )
    await complete(cast["alice"], HELLO)
    cast.assert_used_up()
    cast["bob"].add(say("never asked"))
    with pytest.raises(ScriptError, match="bob: 1 unused step"):
        cast.assert_used_up()


async def test_wait_for_calls_wakes_on_the_nth_call() -> None:
    model = ScriptedModel("a", say("1"), say("2"))
    waiter = asyncio.create_task(model.wait_for_calls(2))
    await complete(model, HELLO)
    assert not waiter.done()
    await complete(model, HELLO)
    await asyncio.wait_for(waiter, 1)


def test_chunks_must_add_up() -> None:
    with pytest.raises(ValueError, match="add up"):
        say("hello", chunks=["he", "y"])
