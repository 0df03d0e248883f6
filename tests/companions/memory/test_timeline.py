"""The days a question names and the days a remembered line talks about (recall ranks by them)."""

from __future__ import annotations

import datetime as dt

from companions.memory.timeline import asked, overlaps, talks_about

D = dt.date
YEARS = range(2022, 2024)


def test_a_question_names_a_day_a_month_a_season_or_the_week_before_a_day() -> None:
    today = D(2023, 12, 1)
    assert asked("What movie did Joanna watch on 1 May, 2022?", today) == ((D(2022, 5, 1), D(2022, 5, 2)),)
    assert asked("Who did Maria have dinner with on May 3, 2023?", today) == ((D(2023, 5, 3), D(2023, 5, 4)),)
    assert asked("Where did Joanna travel to in July 2022?", today) == ((D(2022, 7, 1), D(2022, 8, 1)),)
    assert asked("What state did Joanna visit in summer 2021?", today) == ((D(2021, 6, 1), D(2021, 9, 1)),)
    assert asked("Where was Tim in the week before 16 November 2023?", today) == (
        (D(2023, 11, 9), D(2023, 11, 16)),)
    assert asked("Which tournament did Nate win in the beginning of November 2022?", today) == (
        (D(2022, 11, 1), D(2022, 11, 11)),)
    # no year: that month of every year the memory holds
    assert asked("When did Melanie go camping in June?", today, YEARS) == (
        (D(2022, 6, 1), D(2022, 7, 1)), (D(2023, 6, 1), D(2023, 7, 1)))
    assert asked("5月8日に何を食べた？", today, YEARS) == ((D(2022, 5, 8), D(2022, 5, 9)),
                                                         (D(2023, 5, 8), D(2023, 5, 9)))


def test_a_question_without_a_time_names_no_day() -> None:
    today = D(2023, 12, 1)
    assert asked("What pets does Nate have?", today) == ()
    assert asked("What may happen to Nate if he moves?", today) == ()  # "may" is not the month here


def test_a_line_talks_about_the_days_its_time_words_point_to() -> None:
    friday = D(2022, 10, 21)  # a Friday
    assert talks_about("I watched it last night!", friday) == (D(2022, 10, 20), D(2022, 10, 21))
    assert talks_about("Last Friday I won the tournament", friday) == (D(2022, 10, 14), D(2022, 10, 15))
    assert talks_about("Nothing new here", friday) == (friday, D(2022, 10, 22))
    two_weeks = talks_about("I adopted a dog two weeks ago", friday)
    assert overlaps(two_weeks, (D(2022, 10, 7), D(2022, 10, 8)))
    assert not overlaps(two_weeks, (friday, D(2022, 10, 22)))
    assert talks_about("昨日カレーを作った", friday) == (D(2022, 10, 20), D(2022, 10, 21))



def test_every_time_word_moves_a_line_off_the_day_it_was_said() -> None:
    # The quick look for time words (most lines have none) must let every expression through, in any case
    friday = D(2022, 10, 21)
    said = (friday, D(2022, 10, 22))
    for line in ("YESTERDAY was long", "The day before yesterday", "Two days ago", "a week ago", "last weekend",
                 "the other day", "Lately I read", "I just got back", "this weekend", "Last month", "a year ago",
                 "tomorrow!", "Next week", "next month", "three months ago", "this past Sunday", "on 3 October",
                 "昨晩", "一昨日", "おととい", "先週", "先月", "去年", "明日", "来週"):
        assert talks_about(line, friday) != said, line
    assert talks_about("What a lovely painting, the colours are great", friday) == said
