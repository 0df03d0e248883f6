"""Structured output negotiated per endpoint, one system message, token limits - through the real openai client."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from companions.llm.capabilities import capabilities_of, forget_endpoints
from companions.llm.negotiation import STRING_BOUND
from companions.llm.openai_backend import OpenAIChatModel, RetryPolicy, build_chat_model
from companions.llm.structured import StructuredStats, generate_structured
from companions.llm.system_messages import INSTRUCTIONS_MARK
from companions.llm.types import ChatMessage, ChatRequest, complete
from companions.testing.openai_server import OpenAITestServer, error_reply, text_reply, tool_call_reply

pytestmark = pytest.mark.usefixtures("fresh_endpoints")

SLOW = RetryPolicy(max_retries=3, base_delay_s=5.0, max_delay_s=5.0)  # a backoff would make a test time out


class Vote(BaseModel):
    state: Literal["speak", "listen"]
    importance: int = Field(ge=0, le=10)
    reason: str = ""
    mood: str = Field(default="", max_length=20)


ASK = [ChatMessage.system("You are Akari."), ChatMessage.user("Do you want to speak?")]
DEFAULT = Vote(state="listen", importance=0)
SPEAK = {"state": "speak", "importance": 7, "reason": "named"}


@pytest.fixture
async def model(server: OpenAITestServer) -> AsyncIterator[OpenAIChatModel]:
    m = build_chat_model(server.base_url, "test-model", retry=SLOW, timeout_s=5)
    yield m
    await m.aclose()


async def vote(model: OpenAIChatModel, stats: StructuredStats | None = None) -> Vote:
    return await generate_structured(model, ASK, Vote, default=DEFAULT, counter=stats, name="vote")


def last_user_text(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def schema_in_prompt(body: dict[str, Any]) -> dict[str, Any]:
    text = last_user_text(body)
    value, _ = json.JSONDecoder().raw_decode(text, text.index('{"'))
    assert isinstance(value, dict)
    return value


async def test_a_refused_json_schema_moves_to_json_object_at_once_and_for_every_model_of_the_endpoint(
    server: OpenAITestServer, model: OpenAIChatModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    stats = StructuredStats()
    server.script(error_reply(500, "unknown response_format type"), text_reply(json.dumps(SPEAK)))
    assert await vote(model, stats) == Vote(**SPEAK)
    first, second = (r.body for r in server.chat_requests())
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"]["type"] == "json_object"
    assert second["response_format"]["schema"]["title"] == "vote"
    # The server enforces the schema; the last user message names the keys and their types (fewer prompt tokens)
    assert "- state (\"speak\" or \"listen\")" in last_user_text(second)
    assert '{"' not in last_user_text(second)
    assert [m["role"] for m in second["messages"]] == ["system", "user"]  # never an extra system message
    assert (stats.first_try, stats.llm_errors, stats.fallbacks) == (1, 0, 0)

    other = build_chat_model(server.base_url, "test-model", retry=SLOW)  # another companion, same endpoint
    server.script(text_reply(json.dumps(SPEAK)))
    assert await vote(other) == Vote(**SPEAK)
    await other.aclose()
    assert server.chat_requests()[2].body["response_format"]["type"] == "json_object"
    assert sum("refused" in r.getMessage() for r in caplog.records) == 1
    server.assert_used_up()


async def test_each_refusal_moves_down_to_a_tool_call_and_then_to_plain_text(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    server.script(error_reply(400, "bad request"), error_reply(422, "unprocessable"),
                  tool_call_reply(("vote", SPEAK)))
    assert await vote(model) == Vote(**SPEAK)
    tool_body = server.chat_requests()[2].body
    assert "response_format" not in tool_body
    assert [t["function"]["name"] for t in tool_body["tools"]] == ["vote"]
    assert tool_body["tools"][0]["function"]["parameters"]["title"] == "vote"
    assert tool_body["tool_choice"] == {"type": "function", "function": {"name": "vote"}}
    caps = capabilities_of(model)
    assert caps is not None
    assert caps.structured_mode == "tool"

    forget_endpoints()
    fresh = build_chat_model(server.base_url, "test-model", retry=SLOW)
    server.script(error_reply(500), error_reply(500), error_reply(501, "tools are not supported"),
                  text_reply('Sure! Here is my vote: {"state": "listen", "importance": 2}'))
    assert await vote(fresh) == Vote(state="listen", importance=2)
    await fresh.aclose()
    text_body = server.chat_requests()[-1].body
    assert "response_format" not in text_body
    assert "tools" not in text_body
    assert schema_in_prompt(text_body)["title"] == "vote"
    assert last_user_text(text_body).startswith("Do you want to speak?")
    server.assert_used_up()


async def test_a_tool_call_written_as_text_in_tool_mode_is_still_the_value(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    model.capabilities.refuse_mode("json_schema", "test")
    model.capabilities.refuse_mode("json_object", "test")
    reply = f'<tool_call>\n{json.dumps({"name": "vote", "arguments": SPEAK})}\n</tool_call>'
    server.script(text_reply(reply))
    stats = StructuredStats()
    assert await vote(model, stats) == Vote(**SPEAK)
    assert stats.first_try == 1


async def test_an_unknown_model_is_not_a_capability_fact(server: OpenAITestServer) -> None:
    wrong = build_chat_model(server.base_url, "no-such-model", retry=SLOW)
    stats = StructuredStats()
    assert await vote(wrong, stats) is DEFAULT
    assert stats.llm_errors == 1
    assert wrong.capabilities.structured_mode == "json_schema"
    assert len(server.chat_requests()) == 1
    await wrong.aclose()


async def test_an_error_in_a_mode_that_worked_before_is_an_ordinary_error(server: OpenAITestServer) -> None:
    m = build_chat_model(server.base_url, "test-model", retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
    server.script(text_reply(json.dumps(SPEAK)), error_reply(500), text_reply(json.dumps(SPEAK)))
    assert await vote(m) == Vote(**SPEAK)
    assert await vote(m) == Vote(**SPEAK)  # retried in json_schema after a backoff, not demoted
    await m.aclose()
    assert [r.body["response_format"]["type"] for r in server.chat_requests()] == ["json_schema"] * 3
    assert m.capabilities.structured_mode == "json_schema"


async def test_free_text_fields_are_bounded_and_every_request_has_a_token_limit(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    server.script(text_reply(json.dumps(SPEAK)), text_reply("hi"), text_reply("hi"))
    await vote(model)
    await complete(model, ChatRequest(messages=(ChatMessage.user("hello"),)))
    await complete(model, ChatRequest(messages=(ChatMessage.user("hello"),), max_tokens=40))
    structured, plain, limited = (r.body for r in server.chat_requests())
    properties = structured["response_format"]["json_schema"]["schema"]["properties"]
    assert properties["reason"]["maxLength"] == STRING_BOUND
    assert properties["mood"]["maxLength"] == 20  # the schema's own bound is kept
    assert "maxLength" not in properties["state"]  # an enum is bounded already
    assert structured["max_tokens"] == 160
    assert plain["max_tokens"] == 512
    assert limited["max_tokens"] == 40


async def test_exactly_one_system_message_and_nothing_lost(server: OpenAITestServer, model: OpenAIChatModel) -> None:
    server.script(text_reply("ok"), text_reply("ok"))
    await complete(model, ChatRequest(messages=(
        ChatMessage.system("persona"),
        ChatMessage.system("rules"),
        ChatMessage.user("hello", name="Taro"),
        ChatMessage.assistant("hi Taro"),
        ChatMessage.system("guidance"),
        ChatMessage.user("what now?"),
        ChatMessage.system("vote now"),
    )))
    await complete(model, ChatRequest(messages=(
        ChatMessage.system("persona"), ChatMessage.user("hello"), ChatMessage.assistant("hi"),
        ChatMessage.system("closing"),
    )))
    first, second = (r.body["messages"] for r in server.chat_requests())
    assert [m["role"] for m in first] == ["system", "user", "assistant", "user"]
    assert first[0]["content"] == "persona\n\nrules"
    assert first[1] == {"role": "user", "content": "hello", "name": "Taro"}
    assert first[3]["content"] == f"{INSTRUCTIONS_MARK} guidance\n\nwhat now?\n\n{INSTRUCTIONS_MARK} vote now"
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[3]["content"] == f"{INSTRUCTIONS_MARK} closing"


async def test_a_refusal_then_a_real_failure_still_gives_the_default(server: OpenAITestServer) -> None:
    m = build_chat_model(server.base_url, "test-model", retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
    server.script(error_reply(500), error_reply(503), error_reply(503))
    stats = StructuredStats()
    assert await vote(m, stats) is DEFAULT
    assert (stats.llm_errors, stats.fallbacks) == (1, 1)
    await m.aclose()
    # the 500 was a fact (json_object at once); the 503 in json_object mode a failure, retried once
    assert [r.body["response_format"]["type"] for r in server.chat_requests()] == ["json_schema", *["json_object"] * 2]
    assert m.capabilities.structured_mode == "json_object"


async def test_refused_parameters_are_dropped_without_giving_up_the_mode(
    server: OpenAITestServer, model: OpenAIChatModel
) -> None:
    server.script(
        error_reply(400, "Unrecognized request argument supplied: stream_options"),
        error_reply(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                         "Use 'max_completion_tokens' instead."),
        text_reply(json.dumps(SPEAK)),
    )
    assert await vote(model) == Vote(**SPEAK)
    last = server.chat_requests()[-1].body
    assert "stream_options" not in last
    assert "max_tokens" not in last
    assert last["max_completion_tokens"] == 160
    assert last["response_format"]["type"] == "json_schema"
    server.assert_used_up()


async def test_a_prompt_too_long_is_not_a_capability_fact(server: OpenAITestServer, model: OpenAIChatModel) -> None:
    server.script(error_reply(400, "This model's maximum context length is 8192 tokens"))
    assert await vote(model) is DEFAULT
    assert model.capabilities.structured_mode == "json_schema"
    assert len(server.chat_requests()) == 1


def test_the_keys_of_alike_entries_are_described_once_for_all_of_them() -> None:
    """A joint vote's entries, one per companion, are the same object: its keys are named once, for every member
    (six companions' entries written out cost ~120 prompt tokens more), and the server's grammar keeps the entries."""
    from companions.companion.joint_vote import answer_schema
    from companions.llm.negotiation import describe_keys

    six = describe_keys(answer_schema(["akari", "hina", "souta", "mei", "ren", "yui"]))
    assert "  - akari, hina, souta, mei, ren, yui (each an object):" in six.splitlines()
    assert six.count("- state (\"speak\" or \"listen\")") == 1
    assert len(six) < len(describe_keys(answer_schema(["akari"]))) + 40
    one = describe_keys(answer_schema(["akari"]))
    assert "  - akari (object):" in one.splitlines()  # one member: as before
