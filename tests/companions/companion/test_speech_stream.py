"""Following a line while it is written: the speak call's text, sentences for the voice, tool text held back."""

from __future__ import annotations

import json

import pytest

from companions.companion.speech_stream import CheckedSentences, MessageFieldExtractor, SentenceChunker, ToolTextGuard
from companions.llm.text_tools import looks_like_tool_text


def fed(extractor: MessageFieldExtractor, text: str, size: int) -> list[str]:
    return [extractor.feed(text[i:i + size]) for i in range(0, len(text), size)]


LINE = 'こんにちは、"みんな"！ a\\b / tab\there\nnext 😀 \u00e9'


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 1000])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_the_message_is_decoded_whatever_the_fragments(size: int, ascii_only: bool) -> None:
    arguments = json.dumps({"emotion": "happy", "to": ["akari", {"nested": "}\"]"}], "n": -1.5e3, "ok": True,
                            "message": LINE, "after": "ignored"}, ensure_ascii=ascii_only)
    extractor = MessageFieldExtractor()
    pieces = fed(extractor, arguments, size)
    assert "".join(pieces) == LINE
    assert extractor.complete
    assert extractor.text == LINE


def test_text_arrives_before_the_arguments_end() -> None:
    extractor = MessageFieldExtractor()
    assert extractor.feed('{ "message" :  "Hel') == "Hel"
    assert extractor.feed("lo \\u30") == "lo "  # the escape is half read: nothing of it yet
    assert extractor.feed("42") == "\u3042"
    assert extractor.feed("\\") == ""
    assert extractor.feed('"') == '"'
    assert not extractor.complete
    assert extractor.feed('", "emotion": "sad"}') == ""
    assert extractor.complete
    assert extractor.text == 'Hello \u3042"'


def test_a_surrogate_pair_split_across_fragments_is_one_character() -> None:
    extractor = MessageFieldExtractor()
    assert "".join(fed(extractor, '{"message":"\\ud83d\\ude00!"}', 3)) == "😀!"


@pytest.mark.parametrize("arguments", [
    '{"emotion": "happy"}',  # no message
    '{"message": null}',
    '{"message": 42}',
    '["message", "x"]',
    'message: "hi"',
    '{"text": {"message": "nested is not the argument"}}',
])
def test_arguments_without_a_message_string_yield_nothing(arguments: str) -> None:
    extractor = MessageFieldExtractor()
    assert "".join(fed(extractor, arguments, 2)) == ""
    assert not extractor.complete


@pytest.mark.parametrize("broken", ["\n", "\t", "\\q"])
def test_arguments_the_tool_would_refuse_are_followed_no_further(broken: str) -> None:
    # json.loads (the speak tool's own reading) refuses a raw control character in a string or an unknown escape:
    # the call will be refused, so none of its line after that point is shown or voiced early.
    arguments = '{"message": "Hello ' + broken + ' and more", "emotion": "sad"}'
    extractor = MessageFieldExtractor()
    assert "".join(fed(extractor, arguments, 1)) == "Hello "
    assert not extractor.complete


def chunked(text: str, size: int = 1, **kwargs: int) -> list[str]:
    chunker = SentenceChunker(**kwargs)
    out: list[str] = []
    for i in range(0, len(text), size):
        out += chunker.feed(text[i:i + size])
    rest = chunker.flush()
    return [*out, rest] if rest else out


@pytest.mark.parametrize("size", [1, 3, 100])
def test_sentences_are_cut_at_japanese_and_english_ends(size: int) -> None:
    text = ("今日はいい天気ですね。散歩に行きませんか？ええ、行きましょう！\n"
            "I met Mr. Smith today. He paid 3.5 dollars! Really? Yes")
    assert chunked(text, size) == [
        "今日はいい天気ですね。", "散歩に行きませんか？", "ええ、行きましょう！",
        "I met Mr. Smith today.", "He paid 3.5 dollars!", "Really?", "Yes",
    ]


def test_a_sentence_is_handed_out_as_soon_as_it_ends() -> None:
    chunker = SentenceChunker()
    assert chunker.feed("こんにちは、みなさん。") == []  # a closing quote could still follow
    assert chunker.feed("元気") == ["こんにちは、みなさん。"]
    assert chunker.feed("ですか」と聞いた。") == []
    assert chunker.flush() == "元気ですか」と聞いた。"
    assert chunker.flush() == ""


def test_short_pieces_and_numbers_stay_with_their_sentence() -> None:
    assert chunked("Hi. How are you today? Pi is 3.14159 or so.") == ["Hi. How are you today?", "Pi is 3.14159 or so."]
    assert chunked("See e.g. the docs at example.com for more. Thanks a lot.") == [
        "See e.g. the docs at example.com for more.", "Thanks a lot."]
    assert chunked("「えっ！？」と驚いた。") == ["「えっ！？」と驚いた。"]


def test_an_overlong_sentence_is_cut_after_a_comma() -> None:
    text = "これはとても長い文で、" * 10 + "終わり。"
    pieces = chunked(text, 4, max_chars=40)
    assert "".join(pieces) == text
    assert all(len(p) <= 40 for p in pieces)
    assert all(p.endswith(("、", "。")) for p in pieces)


def test_chunker_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="min_chars"):
        SentenceChunker(min_chars=10, max_chars=10)


def guarded(text: str, size: int = 1) -> str:
    guard = ToolTextGuard()
    shown = [guard.feed(text[i:i + size]) for i in range(0, len(text), size)]
    return "".join(shown) + guard.flush()


@pytest.mark.parametrize("text", [
    '{"name": "speak", "arguments": {"message": "hi"}}',
    '  [{"type": "function"}]',
    '<tool_call>\n{"name": "speak"}\n</tool_call>',
    '<tools>{"type": "function", "function": {"name": "speak"}}</tools>',
    "functions.speak: {\"message\": \"hi\"}",
    "```json\n{\"message\": \"hi\"}\n```",
])
@pytest.mark.parametrize("size", [1, 4, 1000])
def test_tool_syntax_and_json_are_never_shown(text: str, size: int) -> None:
    assert guarded(text, size) == ""


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_a_line_streams_and_tool_syntax_after_it_is_cut(size: int) -> None:
    assert guarded("はい、そうです。", size) == "はい、そうです。"
    assert guarded("fun facts about <b>cats</b> and {curly} things", size) == \
        "fun facts about <b>cats</b> and {curly} things"
    assert guarded('Sure thing! <tool_call>{"name": "speak"}', size).rstrip() == "Sure thing!"
    assert guarded("Okay. functions.speak: hi", size).rstrip() == "Okay."


def test_the_guard_shows_a_line_while_it_streams() -> None:
    guard = ToolTextGuard()
    assert guard.feed("Hello") == "Hello"
    assert guard.feed(" the`") == " the"  # a backtick may begin a fence: it waits
    assert guard.feed("x` is code") == "`x` is code"


def test_looks_like_tool_text() -> None:
    assert looks_like_tool_text("")
    assert looks_like_tool_text("  {")
    assert looks_like_tool_text("<tool")
    assert looks_like_tool_text("functions.speak")
    assert not looks_like_tool_text("hello")
    assert not looks_like_tool_text("こんにちは")


# -- checked sentences ---------------------------------------------------------------------------------------------


def checked(answered: str = "", recent: tuple[str, ...] = (), others: tuple[str, ...] = ()) -> CheckedSentences:
    from companions.companion.composing import LineCheck, clean_piece
    from companions.companion.lines import misidentified

    check = LineCheck("ja", recent, answered, lambda text: misidentified(text, other_names=others))
    notes = ["短く自己紹介をする。", "日本語で答えてください。"]
    return CheckedSentences(clean=lambda text: clean_piece(text, lambda t: t, notes, "あなたは「あかり」です。"),
                            flaw=check.flaw, echo=check.echoes, max_chars=60)


def shown_by(stream: CheckedSentences, text: str, size: int = 3) -> str:
    shown = "".join(stream.feed(text[i:i + size]) for i in range(0, len(text), size))
    return shown + stream.flush()


@pytest.mark.parametrize("size", [1, 4, 100])
def test_a_checked_line_is_released_sentence_by_sentence(size: int) -> None:
    stream = checked()
    assert stream.feed("こんばんは！今日は") == "こんばんは！"  # a whole sentence, not before it ends
    assert shown_by(stream, "星がきれいだね。", size) == "今日は星がきれいだね。"
    assert stream.released == "こんばんは！今日は星がきれいだね。"


@pytest.mark.parametrize("size", [1, 5, 100])
def test_from_a_flawed_sentence_on_nothing_more_is_released(size: int) -> None:
    # measured: Akari introduced herself as Hina; the user's greeting came back as the line
    assert shown_by(checked(others=("Hina", "ひな")), "こんにちは！私はHinaです。よろしくね。", size) == "こんにちは！"
    greeting = "こんにちは！今日はみんな元気ですか。"
    assert shown_by(checked(answered=greeting), greeting, size) == "こんにちは！"
    assert shown_by(checked(recent=("うん、そうだね。",)), "うん、そうだね。", size) == ""
    assert shown_by(checked(), "Hello everyone! How are you?", size) == ""  # English in a Japanese turn


@pytest.mark.parametrize("size", [2, 100])
def test_the_prompt_copied_out_is_never_shown(size: int) -> None:
    # measured: "(Instructions) # このターンの指示 / - 短く自己紹介をする。..." streamed in Akari's bubble, twice
    text = ("(Instructions) # このターンの指示\n- 短く自己紹介をする。\n- 日本語で答えてください。\n"
            "やっほー、あかりだよ！")
    assert shown_by(checked(), text, size) == "やっほー、あかりだよ！"


def test_a_leading_copy_of_the_question_is_left_out_and_the_answer_shown() -> None:
    stream = checked(answered="颯太さん、この地図はいつのもの？")
    assert shown_by(stream, "颯太さん、この地図はいつのもの？江戸時代の地図だよ。") == "江戸時代の地図だよ。"


def test_a_line_longer_than_its_limit_stops_at_the_limit() -> None:
    stream = checked()
    long = "とても長いお話をするね。" * 8  # 96 characters, the limit is 60
    assert len(shown_by(stream, long)) <= 60
    assert stream.stopped


@pytest.mark.parametrize("size", [1, 5, 100])
def test_a_sentence_that_makes_the_line_say_the_message_back_is_skipped_and_the_next_shown(size: int) -> None:
    # measured on the 0.5B model: Akari's whole first line was "こんにちは！"; the sentence after the echo was lost
    stream = checked(answered="こんにちは！みんな元気？")
    shown = shown_by(stream, "こんにちは！みんな元気ですか？少しでも話すのが楽しいですね。", size)
    assert shown == "こんにちは！少しでも話すのが楽しいですね。"
    assert stream.released == shown
