"""The words a question and a remembered line share, in any of their forms (companions/memory/matching.py)."""

from __future__ import annotations

from companions.memory.matching import asks, shared_words, stem, telling_words


def test_forms_of_one_word_compare_equal_and_other_words_do_not() -> None:
    for forms in (("painted", "painting", "paints", "paint"), ("camped", "camping", "camps", "camp"),
                  ("stories", "story"), ("likes", "liked", "liking", "like"), ("swimming", "swim"),
                  ("Caroline's", "caroline")):
        assert len({stem(w) for w in forms}) == 1, forms
    assert len({stem("class"), stem("classes")}) == 1
    assert [stem(w) for w in ("bus", "thing", "need", "famous", "class")] == ["bus", "thing", "need", "famous",
                                                                              "class"]


def test_a_question_and_a_line_share_words_said_in_another_form() -> None:
    assert telling_words("Where has Melanie camped?") & telling_words("We went camping at the beach")
    assert not telling_words("Where has Melanie camped?") & telling_words("We went to the beach")
    # Japanese as the index compares it: bigrams, without kana-only pairs ("した" says nothing)
    assert "旅行" in telling_words("去年の旅行はどうでしたか") & telling_words("旅行した")
    assert not telling_words("行きました") & telling_words("食べました")


def test_a_line_holding_the_question_s_rarer_word_shares_more_of_it() -> None:
    question = telling_words("Which pottery class did Melanie take?")
    lines = {1: telling_words("Melanie signed up for pottery classes"), 2: telling_words("Melanie took a class"),
             3: telling_words("Melanie said hello"), 4: telling_words("Melanie went to a class on cooking"),
             5: telling_words("Nothing of it here")}
    shares = shared_words(question, lines)
    assert shares[1] > shares[2] > shares[3] > shares[5] == 0.0
    assert shares[2] == shares[4]  # "took" is not "take": no dictionary of irregular forms
    assert shared_words(frozenset(), lines) == {}


def test_a_line_that_asks_is_told_apart() -> None:
    assert asks("What did you bake? ")
    assert asks("何を焼いたの？")
    assert not asks("I baked a cake.")
