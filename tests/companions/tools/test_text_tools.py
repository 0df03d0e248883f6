"""Tool calls written as text: held back while streaming, parsed when offered, never shown as a line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companions.llm.text_tools import looks_like_tool_text, parse_text_tool_calls, strip_tool_text
from companions.llm.types import ToolSpec


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "   ",
        "{",
        '  {"name": "speak"',
        "[",
        "<",
        "<to",
        "<tool_call>",
        "<tools>{\"type\": \"function\"",
        "<function=speak>",
        "f",
        "func",
        "functions",
        "functions.speak:",
        "Functions.Speak:",
        "`",
        "```json",
        "✿",
        "✿FUNCTION✿: speak",
        "\n\n<tool_call>\n{",
    ],
)
def test_held_back_while_it_could_be_tool_syntax(prefix: str) -> None:
    assert looks_like_tool_text(prefix)


@pytest.mark.parametrize(
    "prefix",
    [
        "Hi",
        "こんにちは",
        "fun fact: cats sleep a lot",
        "functional programming is",
        "<3 thanks",
        "Toolbox",
        "あかり、おはよう",
        "  Well, {maybe}",
    ],
)
def test_prose_is_shown_at_once(prefix: str) -> None:
    assert not looks_like_tool_text(prefix)


def test_a_word_that_merely_starts_like_functions_is_released_once_it_diverges() -> None:
    assert looks_like_tool_text("function")
    assert not looks_like_tool_text("functional")
    assert not looks_like_tool_text("functions are fun")


SPEAK = ToolSpec(
    name="speak",
    parameters={
        "type": "object",
        "properties": {"message": {"type": "string"}, "emotion": {"type": "string"}, "to": {"type": "array"}},
        "required": ["message"],
    },
)
GESTURE = ToolSpec(
    name="gesture",
    parameters={"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]},
)
TOOLS = (SPEAK, GESTURE)


def calls(text: str, tools: tuple[ToolSpec, ...] = TOOLS) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, json.loads(c.arguments)) for c in parse_text_tool_calls(text, tools).calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<tool_call>\n{"name": "speak", "arguments": {"message": "こんにちは！", "emotion": "happy"}}\n</tool_call>',
         {"message": "こんにちは！", "emotion": "happy"}),
        ('<tool_call>{"name": "speak", "arguments": {"message": "Hi"}}', {"message": "Hi"}),
        ('functions.speak:\n{"message": "やあ、みんな", "emotion": "neutral"}',
         {"message": "やあ、みんな", "emotion": "neutral"}),
        ("functions.speak:\nこんにちは、みんな！今日は晴れだね。", {"message": "こんにちは、みんな！今日は晴れだね。"}),
        ('{"name": "speak", "arguments": "{\\"message\\": \\"hello there\\"}"}', {"message": "hello there"}),
        ('{"function": "speak", "parameters": {"message": "yo"}}', {"message": "yo"}),
        ('{"type": "function", "function": {"name": "speak", "arguments": "{\\"message\\": \\"nested\\"}"}}',
         {"message": "nested"}),
        ('{"message": "元気？", "emotion": "happy"}', {"message": "元気？", "emotion": "happy"}),
        ('```json\n{"name": "speak", "arguments": {"message": "fenced"}}\n```', {"message": "fenced"}),
        ('<function=speak>{"message": "llama style"}</function>', {"message": "llama style"}),
        ('✿FUNCTION✿: speak\n✿ARGS✿: {"message": "qwen style"}', {"message": "qwen style"}),
        ("{'message': 'a Python dict'}", {"message": "a Python dict"}),
        ('{"name": "speak", "message": "flat"}', {"message": "flat"}),
    ],
)
def test_a_speak_call_written_as_text_becomes_a_call(text: str, expected: dict[str, object]) -> None:
    parsed = parse_text_tool_calls(text, TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in parsed.calls] == [("speak", expected)]
    assert parsed.calls[0].id == "text_call_0"
    assert parsed.text == ""
    assert not parsed.discarded


def test_several_calls_keep_their_order_and_the_prose_around_them() -> None:
    text = ('Sure!\n<tool_call>{"name": "speak", "arguments": {"message": "Hi"}}</tool_call>\n'
            '<tool_call>{"name": "gesture", "arguments": {"type": "wave"}}</tool_call>')
    parsed = parse_text_tool_calls(text, TOOLS)
    assert [(c.id, c.name) for c in parsed.calls] == [("text_call_0", "speak"), ("text_call_1", "gesture")]
    assert parsed.text == "Sure!"


def test_a_list_of_calls_is_read() -> None:
    assert calls('[{"name": "speak", "arguments": {"message": "a"}}, {"name": "gesture", "arguments": '
                 '{"type": "nod"}}]') == [("speak", {"message": "a"}), ("gesture", {"type": "nod"})]


def test_json_cut_off_by_the_token_limit_is_closed_and_read() -> None:
    assert calls('{"message": "ねえ、それって本当に') == [("speak", {"message": "ねえ、それって本当に"})]
    assert calls('<tool_call>{"name": "speak", "arguments": {"message": "Hi", "emo') == [("speak", {"message": "Hi"})]


@pytest.mark.parametrize(("cut", "message"), [
    ('{"message": "Hi \\u30', "Hi "),  # inside a \\u escape: the escape is left out
    ('{"message": "Hi \\', "Hi "),  # right after a backslash
    ('{"message": "Hi", "emotion": nu', "Hi"),  # inside a literal
    ('{"message": "Hi", "n": -1.', "Hi"),  # inside a number
])
def test_json_cut_inside_an_escape_or_a_value_is_read_as_far_as_it_goes(cut: str, message: str) -> None:
    assert calls(cut) == [("speak", {"message": message})]


@pytest.mark.parametrize(
    "text",
    [
        '<tools>{"type": "function", "function": {"name": "speak", "description": "Say something aloud", '
        '"parameters": {"type": "object", "properties": {"message": {"type": "string"}}}}}</tools>',
        '<tools>\n{"type": "function", "function": {"name": "speak", "description": "Say',  # cut off
        '{"type": "function", "function": {"name": "speak", "description": "Say something"}}',
        '{"name": "speak", "description": "Say something", "parameters": {"type": "object", "properties": {}}}',
        '{"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}',
        '{"name": "search", "arguments": {"query": "stars"}}',  # a tool that was not offered
        '{"answer": 42}',
        '{"message": "hi", "emotion": happy}',  # malformed
        "```python\nprint('hello')\n```",
        "functions.speak:",
    ],
)
def test_the_schema_echoed_back_and_other_json_are_discarded(text: str) -> None:
    parsed = parse_text_tool_calls(text, TOOLS)
    assert parsed.calls == ()
    assert parsed.text == ""
    assert parsed.discarded
    assert strip_tool_text(text) == ""


def test_prose_after_the_schema_is_kept() -> None:
    text = '<tools>{"type": "function", "function": {"name": "speak"}}</tools>\nこんにちは！元気だよ。'
    parsed = parse_text_tool_calls(text, TOOLS)
    assert parsed.text == "こんにちは！元気だよ。"
    assert parsed.discarded


def test_only_offered_tools_become_calls() -> None:
    assert calls('{"name": "gesture", "arguments": {"type": "wave"}}', (SPEAK,)) == []
    assert calls('{"message": "hello"}', (GESTURE,)) == []
    assert calls("functions.speak:\nhello", ()) == []


def test_brackets_in_prose_are_prose() -> None:
    text = "I like {curly} braces, [souta] and footnotes [1, 2]."
    parsed = parse_text_tool_calls(text, TOOLS)
    assert (parsed.calls, parsed.text, parsed.discarded) == ((), text, False)
    assert strip_tool_text(text) == text


def test_special_tokens_and_stray_tags_never_reach_the_text() -> None:
    assert strip_tool_text("ねえ、聞いて！<|im_end|>") == "ねえ、聞いて！"
    assert strip_tool_text("<|im_start|>assistant\nHello!</tool_call>") == "Hello!"


def test_strip_keeps_the_words_after_functions_speak_and_drops_the_rest() -> None:
    assert strip_tool_text("functions.speak:\nこんにちは、みんな！") == "こんにちは、みんな！"
    assert strip_tool_text('Hello! {"name": "speak", "arguments": {"message": "Hello!"}}') == "Hello!"
    assert strip_tool_text("✿FUNCTION✿: speak\n✿ARGS✿: {\"message\": \"x\"}\n✿RESULT✿: ok\n✿RETURN✿: Done.") == "Done."
    assert strip_tool_text("  Just words.  ") == "Just words."


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]<>"\':,.` \nabcspeakmessage✿functions_tool_call/あ')), max_size=80))
def test_strip_never_leaves_tool_syntax_and_never_raises(text: str) -> None:
    out = strip_tool_text(text)
    for syntax in ("<tool_call", "<tools", "{\"", "[{", "```", "functions.speak:"):
        assert syntax not in out
    parse_text_tool_calls(text, TOOLS)


@pytest.mark.parametrize("text", [
    "[" * 100_000,
    '<tool_call>{"name": "speak", "arguments": ' + "[" * 50_000 + "}</tool_call>",
    'speak({"message": ' + "[" * 100_000 + "})",
])
def test_nesting_too_deep_to_read_is_no_call_and_no_crash(text: str) -> None:
    """A small model looping on "[" wrote nesting Python's JSON reader gives up on with RecursionError (not a
    ValueError): the line's composing failed. It is text that is no call."""
    speak = ToolSpec(name="speak", description="say", parameters={
        "type": "object", "properties": {"message": {"type": "string"}}})
    parsed = parse_text_tool_calls(text, [speak])
    assert not parsed.calls
