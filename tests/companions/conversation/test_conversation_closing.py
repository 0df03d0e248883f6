"""The repetition detector: character n-gram similarity, CJK-aware, no LLM."""

from __future__ import annotations

import pytest

from companions.conversation.closing import RepetitionDetector, is_mostly_cjk, later_stage, similarity


def test_same_words_with_different_punctuation_and_case_are_the_same() -> None:
    assert similarity("That's great, I agree!", "that's GREAT... I agree") == 1.0


def test_english_paraphrase_is_similar_and_a_new_topic_is_not() -> None:
    a = "I really love this sunny weather today, it is perfect for a walk."
    b = "I really love the sunny weather today, perfect for a long walk!"
    c = "Did you finish reading the book about volcanoes?"
    assert similarity(a, b) > 0.6
    assert similarity(a, c) < 0.25


def test_japanese_uses_bigrams_and_sees_repetition_without_spaces() -> None:
    a = "今日は本当にいい天気ですね。散歩にぴったりです。"
    b = "本当にいい天気ですね!散歩にぴったり。"
    c = "昨日の映画はどうでしたか?"
    assert is_mostly_cjk(a)
    assert not is_mostly_cjk("hello world")
    assert similarity(a, b) > 0.6
    assert similarity(a, c) < 0.2


def test_full_width_and_half_width_forms_fold_together() -> None:
    assert similarity("ＡＢＣ１２３ です", "abc123です") == 1.0


def test_empty_or_symbol_only_text_is_never_a_repeat() -> None:
    assert similarity("", "") == 0.0
    assert similarity("!!!", "!!!") == 0.0


def test_pressure_rises_with_repeats_in_the_window_and_resets() -> None:
    detector = RepetitionDetector(window=6, threshold=0.6)
    assert detector.observe("Let's talk about cooking pasta tonight.").pressure == "none"
    assert detector.observe("What about the train schedule tomorrow?").pressure == "none"
    stages = [detector.observe(line).pressure for line in (
        "Let's talk about cooking pasta tonight!",
        "What about the train schedule tomorrow??",
        "let's talk about cooking pasta tonight",
    )]
    assert stages == ["pre-closing", "closing", "terminal"]
    detector.reset()
    assert detector.pressure == "none"


def test_old_repeats_fall_out_of_the_window() -> None:
    detector = RepetitionDetector(window=2, threshold=0.6, terminal_after=3)
    detector.observe("same line here")
    assert detector.observe("same line here").pressure == "pre-closing"
    detector.observe("a brand new thought about volcanoes")
    assert detector.observe("and yet another unrelated idea on trains").pressure == "none"


@pytest.mark.parametrize(("a", "b", "later"), [("none", "closing", "closing"), ("terminal", "pre-closing", "terminal")])
def test_later_stage(a: str, b: str, later: str) -> None:
    assert later_stage(a, b) == later  # type: ignore[arg-type]
