"""The facts about llama-cpp-python's server that Madoi is designed around (docs/real-servers.md), checked against
the real server: when a new version changes one of them, this fails before the conversation does."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from tests.realmodel.conftest import RealServer, RealServers

pytestmark = pytest.mark.realmodel

VOTE_SCHEMA = {
    "type": "object",
    "properties": {
        "state": {"type": "string", "enum": ["speak", "listen"]},
        "importance": {"type": "integer", "minimum": 0, "maximum": 10},
        "reason": {"type": "string", "maxLength": 30},
    },
    "required": ["state", "importance", "reason"],
}
VOTE_PROMPT = [
    {"role": "system", "content": "You are Akari, a cheerful companion in a group chat with Hina and Souta."},
    {"role": "user", "content": "User: Akari, what is your favourite star?\nDecide whether you want to speak next. "
                                "Answer as JSON with state (speak|listen), importance 0-10 and a long detailed "
                                "reason of at least 200 words."},
]
SPEAK_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "speak",
        "description": "Say one line aloud to the others.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string"},
                           "emotion": {"type": "string", "enum": ["happy", "sad", "angry", "neutral"]}},
            "required": ["message", "emotion"],
        },
    },
}
SPEAK_PROMPT = [{"role": "system", "content": "You are Akari, a cheerful companion. Use the speak tool to talk."},
                {"role": "user", "content": "Akari, what is your favourite star?"}]


def client(server: RealServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="none", max_retries=0, timeout=60)


def test_the_server_says_what_it_is(real_server: RealServer) -> None:
    root = real_server.base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/openapi.json", timeout=10) as answer:
        info = json.load(answer)["info"]
    assert "llama.cpp Python API" in info["title"]
    assert info["version"] == "0.3.36"
    with urllib.request.urlopen(f"{real_server.base_url}/models", timeout=10) as answer:
        model = json.load(answer)["data"][0]
    assert model["owned_by"] == "me"
    assert model["id"].endswith(".gguf")  # the path, unless --model_alias names it
    with pytest.raises(urllib.error.HTTPError) as no_props:  # llama.cpp's llama-server has /props; this one has not
        urllib.request.urlopen(f"{root}/props", timeout=10)
    assert no_props.value.code == 404


def test_json_schema_is_refused_with_500_and_json_object_with_a_schema_is_enforced(real_server: RealServer) -> None:
    llm = client(real_server)
    with pytest.raises(openai.InternalServerError) as refused:
        llm.chat.completions.create(model=real_server.model, messages=VOTE_PROMPT, max_tokens=60,
                                    response_format={"type": "json_schema", "json_schema": {
                                        "name": "vote", "schema": VOTE_SCHEMA, "strict": False}})
    assert refused.value.status_code == 500
    assert "Input should be 'text' or 'json_object'" in refused.value.response.text

    answer = llm.chat.completions.create(model=real_server.model, messages=VOTE_PROMPT, max_tokens=60,
                                         response_format={"type": "json_object", "schema": VOTE_SCHEMA})
    vote = json.loads(answer.choices[0].message.content or "")
    assert vote["state"] in {"speak", "listen"}
    # The grammar enforces the type, not the bounds: llama-cpp-python 0.3.36's schema-to-grammar leaves integer
    # minimum/maximum out (its llama_grammar.py: "TODO: support minimum, maximum"); the generic build answered 20.
    # Madoi's Vote validates them (companions/conversation/ballot.py).
    assert isinstance(vote["importance"], int)
    assert len(vote["reason"]) <= 30  # asked for 200 words: the grammar bounds a free-text field


def test_a_named_tool_choice_gives_a_tool_call_whose_arguments_stream(real_server: RealServer) -> None:
    stream = client(real_server).chat.completions.create(
        model=real_server.model, messages=SPEAK_PROMPT, tools=[SPEAK_TOOL], max_tokens=80, stream=True,
        tool_choice={"type": "function", "function": {"name": "speak"}})
    pieces, finish = [], None
    for chunk in stream:
        delta = chunk.choices[0].delta
        assert not delta.content
        for call in delta.tool_calls or []:
            assert call.function is not None
            assert call.function.name == "speak"
            pieces.append(call.function.arguments or "")
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls"
    assert len(pieces) > 5  # the arguments arrive piece by piece, as they are generated
    arguments = json.loads("".join(pieces))
    assert arguments["message"].strip()
    assert arguments["emotion"] in {"happy", "sad", "angry", "neutral"}


def test_max_tokens_cuts_the_answer_with_finish_reason_length(real_server: RealServer) -> None:
    answer = client(real_server).chat.completions.create(
        model=real_server.model, max_tokens=8,
        messages=[{"role": "user", "content": "Write a long story about the stars."}])
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage is not None
    assert answer.usage.completion_tokens == 8


def test_chatml_drops_every_system_message_but_the_first(real_servers: RealServers) -> None:
    server = real_servers.get("chatml")
    llm = client(server)

    def secret_word(messages: list[dict[str, str]]) -> str:
        answer = llm.chat.completions.create(model=server.model, messages=messages, max_tokens=12, temperature=0)
        return answer.choices[0].message.content or ""

    ask = {"role": "user", "content": "What is the secret word? Answer with the word only."}
    assert "PINEAPPLE" in secret_word([{"role": "system", "content": "The secret word is PINEAPPLE."}, ask])
    assert "PINEAPPLE" not in secret_word([{"role": "system", "content": "You are a helpful assistant."},
                                           {"role": "system", "content": "The secret word is PINEAPPLE."}, ask])


def test_a_second_request_cuts_off_a_streamed_one_which_ends_without_finish_reason(real_server: RealServer) -> None:
    llm = client(real_server)
    first_pieces = threading.Event()
    seen: dict[str, Any] = {"pieces": 0, "finish": None}

    def long_story() -> None:
        stream = llm.chat.completions.create(model=real_server.model, max_tokens=200, stream=True, messages=[
            {"role": "user", "content": "Count from 1 to 100, one number per line."}])
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                seen["pieces"] += 1
                if seen["pieces"] == 5:
                    first_pieces.set()
            if chunk.choices and chunk.choices[0].finish_reason:
                seen["finish"] = chunk.choices[0].finish_reason
        first_pieces.set()

    story = threading.Thread(target=long_story)
    story.start()
    assert first_pieces.wait(60)
    answer = llm.chat.completions.create(model=real_server.model, max_tokens=8,
                                         messages=[{"role": "user", "content": "Say hello."}])
    story.join(60)
    assert answer.choices[0].message.content
    assert 5 <= seen["pieces"] < 150  # cut off long before 1..100 was written
    assert seen["finish"] is None  # no finish_reason, no error: the stream just ends
