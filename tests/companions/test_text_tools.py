"""Tool calls written as text: held back while streaming, parsed when offered, never shown as a line."""

from __future__ import annotations

import pytest

from companions.llm.text_tools import looks_like_tool_text


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
