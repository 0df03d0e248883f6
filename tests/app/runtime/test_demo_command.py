"""The README's no-model demo, run literally: ``python -m companions.testing.openai_server --demo --port N`` answers
the real ``openai`` client as a companion would, and ``madoi --headless`` pointed at it gets companion lines."""

from __future__ import annotations

import json
from pathlib import Path

import openai

from companions.testing.openai_server.demo_director import GOODBYE, LINES, DemoDirector
from tests.app.headless import demo_server, headless_madoi


async def test_the_readme_demo_answers_the_openai_client_as_a_companion() -> None:
    async with demo_server() as base_url:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
        speak = {"type": "function", "function": {"name": "speak", "parameters": {"type": "object"}}}
        streamed = await client.chat.completions.create(
            model="echo", stream=True, tools=[speak],  # type: ignore[list-item]
            messages=[{"role": "system", "content": 'You are "Akari" (id: akari).'},
                      {"role": "user", "content": "You (id: user): Good evening, everyone!"}])
        arguments = ""
        async for chunk in streamed:
            for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                arguments += call.function.arguments or "" if call.function else ""
        plain = await client.chat.completions.create(
            model="echo", messages=[{"role": "system", "content": 'You are "Hina" (id: hina).'},
                                    {"role": "user", "content": "You (id: user): こんばんは！"}])
        await client.close()
    assert json.loads(arguments)["message"] == LINES["en"][0]  # the speak call, streamed (this crashed before)
    assert plain.choices[0].message.content == LINES["ja"][0]  # no tools: the line as plain text (a new user line)


async def test_madoi_headless_pointed_at_the_readme_demo_gets_companion_lines(tmp_path: Path) -> None:
    async with demo_server() as base_url, headless_madoi(base_url, tmp_path / "home") as madoi:
        await madoi.say("みんな、こんばんは！")
        lines = await madoi.wait_for(lambda got: len(got) >= 2, timeout=60)
    assert len(lines) >= 2, "".join(madoi.stderr[-30:])
    assert {m.params.message for m in lines} <= set(LINES["ja"]) | {GOODBYE["ja"]}
    assert lines[0].params.from_ != lines[1].params.from_  # the floor goes round


def _ask(director: DemoDirector, companion: str, heard: list[str], *, vote: bool = False) -> str:
    """One request as Madoi sends it: the persona, what the companion heard, and a vote schema or the speak tool."""
    messages = [{"role": "system", "content": f'You are "{companion}" (id: {companion}).'}]
    messages += [{"role": "user", "content": line} for line in heard]
    if vote:
        schema = {"type": "object", "properties": {"state": {"enum": ["speak", "listen"]}}}
        body = {"messages": messages, "response_format": {"type": "json_schema",
                                                          "json_schema": {"name": "vote", "schema": schema}}}
        reply = director(body)
        assert hasattr(reply, "text")
        return str(json.loads(reply.text)["closing"])
    speak = {"type": "function", "function": {"name": "speak", "parameters": {"type": "object"}}}
    reply = director({"messages": messages, "tools": [speak]})
    assert hasattr(reply, "calls")
    return str(json.loads(reply.calls[0].arguments)["message"])


def test_a_new_user_message_starts_a_new_conversation_after_a_goodbye() -> None:
    director = DemoDirector()
    heard = ["You (id: user): Hello everyone!"]
    said = [_ask(director, who, heard) for who in ("akari", "hina", "souta", "akari", "hina")]
    assert said[-1] == GOODBYE["en"]
    assert _ask(director, "souta", heard, vote=True) == "terminal"
    heard += [f"Hina (id: hina): {said[-1]}", "You (id: user): Wait, one more thing: any plans for tomorrow?"]
    assert _ask(director, "souta", heard, vote=True) == "none"  # a fresh little conversation, not a goodbye
    assert _ask(director, "souta", heard) == LINES["en"][0]
    heard.append("You (id: user): Hello everyone!")  # the same words again are a new message too
    assert _ask(director, "akari", heard, vote=True) == "none"
