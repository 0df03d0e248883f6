"""Structured output that survives weak models: parse leniently, repair once, then the default - always counted."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from companions.llm.openai_backend import RetryPolicy, build_chat_model
from companions.llm.scripted import ScriptedModel, fail, reply_json, say
from companions.llm.structured import StructuredStats, extract_json_object, generate_structured
from companions.llm.types import ChatMessage
from companions.testing.openai_server import OpenAITestServer, error_reply, text_reply


class Vote(BaseModel):
    state: Literal["speak", "listen"]
    importance: int = Field(ge=0, le=10)


ASK = [ChatMessage.system("Vote."), ChatMessage.user("Do you want to speak?")]
DEFAULT = Vote(state="listen", importance=0)


@pytest.mark.parametrize(
    "text",
    [
        '{"state": "speak", "importance": 7}',
        'Sure! Here it is:\n```json\n{"state": "speak", "importance": 7}\n```',
        'I think {"state": "speak", "importance": 7} and that is all {"other": 1}',
        '```\n{"state": "speak", "importance": 7}\n```',
        'not {json} but then {"state": "speak", "importance": 7}',
    ],
)
async def test_valid_answers_in_weak_model_wrappings_are_accepted(text: str) -> None:
    stats = StructuredStats()
    model = ScriptedModel("weak", reply_json(text))
    assert await generate_structured(model, ASK, Vote, default=DEFAULT, counter=stats) == Vote(
        state="speak", importance=7
    )
    assert (stats.requests, stats.first_try, stats.repairs, stats.fallbacks) == (1, 1, 0, 0)
    model.assert_used_up()


async def test_the_request_asks_for_the_schema() -> None:
    model = ScriptedModel("m", reply_json(Vote(state="speak", importance=1)))
    await generate_structured(model, ASK, Vote, default=DEFAULT, name="vote")
    fmt = model.requests[0].response_format
    assert fmt is not None
    assert fmt.name == "vote"
    assert fmt.schema_["properties"]["state"]["enum"] == ["speak", "listen"]


async def test_one_repair_sends_the_problem_back() -> None:
    stats = StructuredStats()
    model = ScriptedModel(
        "weak", reply_json('{"state": "shout", "importance": 99}'), reply_json('{"state": "speak", "importance": 9}')
    )
    value = await generate_structured(model, ASK, Vote, default=DEFAULT, counter=stats)
    assert value == Vote(state="speak", importance=9)
    assert (stats.repairs, stats.repaired, stats.fallbacks) == (1, 1, 0)
    repair = model.requests[1].messages
    assert repair[-2].role == "assistant"
    assert "shout" in repair[-2].text
    assert "state" in repair[-1].text
    assert "importance" in repair[-1].text  # both field errors are named


async def test_still_invalid_after_repair_gives_the_default() -> None:
    stats = StructuredStats()
    model = ScriptedModel("weak", say("I would rather not."), reply_json('{"state": "speak"'))
    assert await generate_structured(model, ASK, Vote, default=DEFAULT, counter=stats) is DEFAULT
    assert (stats.repairs, stats.repaired, stats.fallbacks) == (1, 0, 1)
    assert stats.fallback_rate == 1.0
    model.assert_used_up()  # exactly one repair, no more


async def test_a_failing_model_gives_the_default_without_repair() -> None:
    stats = StructuredStats()
    model = ScriptedModel("down", fail("unreachable", retryable=True))
    assert await generate_structured(model, ASK, Vote, default=DEFAULT, counter=stats) is DEFAULT
    assert (stats.llm_errors, stats.fallbacks, stats.repairs) == (1, 1, 0)


def test_no_object_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("[1, 2] and nothing else")


async def test_over_http_malformed_then_repaired_then_server_failure(server: OpenAITestServer) -> None:
    """The same path through the real client: malformed JSON content, a repair, and a 500 that exhausts retries."""
    stats = StructuredStats()
    model = build_chat_model(server.base_url, "test-model", retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
    server.script(text_reply('{"state": "speak", "importance": '), text_reply('{"state": "speak", "importance": 4}'))
    assert await generate_structured(model, ASK, Vote, default=DEFAULT, counter=stats) == Vote(
        state="speak", importance=4
    )
    assert server.chat_requests()[0].body["response_format"]["type"] == "json_schema"
    server.script(error_reply(500), error_reply(500))
    assert await generate_structured(model, ASK, Vote, default=DEFAULT, counter=stats) is DEFAULT
    await model.aclose()
    assert (stats.requests, stats.repaired, stats.llm_errors, stats.fallbacks) == (2, 1, 1, 1)
    assert server.pending == 0
