"""The worker streams the ``speak`` call's text as it is written, and never tool syntax written as plain text."""

from __future__ import annotations

import json

from companions.companion.worker import RunContext, TextStreamed, Worker
from companions.llm.scripted import ScriptedModel, call, calls, say
from companions.llm.types import ChatMessage
from companions.tools.functions import ToolRegistry, tool
from companions.wire.bus import InProcessBus

CONTEXT = [ChatMessage.system("You are a test."), ChatMessage.user("hello")]


def speaking_tools(said: list[str]) -> ToolRegistry:
    @tool
    def speak(message: str, emotion: str = "neutral") -> str:
        """Say something."""
        said.append(message)
        return "said"

    @tool
    def gesture(type: str) -> str:
        """Gesture."""
        return "ok"

    return ToolRegistry([speak, gesture])


async def streamed_by(model: ScriptedModel, tools: ToolRegistry) -> list[TextStreamed]:
    bus = InProcessBus()
    seen: list[TextStreamed] = []
    bus.subscribe("events", lambda e: seen.append(e) if isinstance(e, TextStreamed) else None)
    await Worker(model, tools, bus=bus, owner="akari").run(CONTEXT, ctx=RunContext(turn_id="t1"))
    await bus.drain()
    await bus.aclose()
    model.assert_used_up()
    return seen


async def test_the_speak_calls_message_streams_decoded_as_speech() -> None:
    said: list[str] = []
    line = 'こんにちは、"みんな"！\nTab\there 😀'
    model = ScriptedModel("m", call("speak", {"emotion": "happy", "message": line}), say(""))
    seen = await streamed_by(model, speaking_tools(said))
    speech = [e for e in seen if e.kind == "speech"]
    assert len(speech) > 3  # in pieces, as the arguments streamed (8 characters of JSON at a time)
    assert "".join(e.text for e in speech) == line
    assert all(e.companion_id == "akari" and e.turn_id == "t1" for e in seen)
    assert [e.done for e in seen].count(True) == 1  # the end of the request that streamed
    assert seen[-1].done
    assert said == [line]
    # Nothing of the JSON ever reached the stream.
    assert not any(marker in e.text for e in seen for marker in ('"message"', "{", "emotion"))


async def test_only_the_speak_call_streams_when_several_calls_come() -> None:
    said: list[str] = []
    model = ScriptedModel("m", calls(("gesture", {"type": "wave"}), ("speak", {"message": "Hi all."}),
                                     text="Let me greet them."), say(""))
    seen = await streamed_by(model, speaking_tools(said))
    assert "".join(e.text for e in seen if e.kind == "speech") == "Hi all."
    assert "".join(e.text for e in seen if e.kind == "text") == "Let me greet them."


async def test_tool_syntax_written_as_text_is_never_streamed() -> None:
    echoed = json.dumps({"name": "speak", "arguments": {"message": "やあ"}}, ensure_ascii=False)
    for text in (f"<tool_call>\n{echoed}\n</tool_call>", echoed, f"functions.speak:{echoed}",
                 '<tools>{"type": "function", "function": {"name": "speak"}}</tools>', f"```json\n{echoed}\n```"):
        model = ScriptedModel("m", say(text, chunks=[text[i:i + 3] for i in range(0, len(text), 3)]))
        seen = await streamed_by(model, speaking_tools([]))
        assert [e for e in seen if e.text] == [], text


async def test_a_plain_line_still_streams() -> None:
    model = ScriptedModel("m", say("はい、そうです。", chunks=["はい", "、そう", "です。"]))
    seen = await streamed_by(model, speaking_tools([]))
    assert [(e.text, e.kind) for e in seen if not e.done] == [("はい", "text"), ("、そう", "text"), ("です。", "text")]
