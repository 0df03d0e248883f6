"""Dates in what people say: the days a question asks about, and the days a remembered line talks about.

Recall (app/memory/recall.py) ranks a line higher when the question names a time ("What did Joanna watch on 1 May,
2022?", "Where did Tim go in the week before 16 November 2023?", "in summer 2021", "last month") and the line,
resolved against the day it was said, talks about a day in it: "I watched it last night", said on 2 May 2022, is
about 1 May 2022. Only words are read (English and Japanese): no language model, a few microseconds a line.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

Span = tuple[dt.date, dt.date]  # the first day and the day after the last

_MONTHS: Final = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), start=1) for name in names}
_WEEKDAYS: Final = {name: number for number, name in enumerate(
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
_SEASONS: Final = {"spring": (3, 6), "summer": (6, 9), "fall": (9, 12), "autumn": (9, 12), "winter": (12, 15)}
_NUMBERS: Final = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                   "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3, "several": 3}
_UNIT_DAYS: Final = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
# "1 May, 2022", "May 1st 2022", "May 3, 2023", "on 8 May": a day; "May 2022", "in June": a month; "2022": a year
_DAY_MONTH = re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?\b", re.I)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+{_YEAR})?", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}(?:,?\s+(?:of\s+)?{_YEAR})?\b", re.I)
_SEASON_YEAR = re.compile(rf"\b(?P<season>spring|summer|fall|autumn|winter)(?:\s+(?:of\s+)?{_YEAR})?\b", re.I)
_BARE_YEAR = re.compile(rf"\b(?:in|of|during|since)\s+{_YEAR}\b", re.I)
_PART = re.compile(r"\b(?P<part>beginning|start|early|middle|mid|end|late)(?:\s+of)?[\s-]+$", re.I)
_WEEK_BEFORE = re.compile(r"\b(?:the\s+)?(?P<which>week|weekend|month|day)\s+(?P<rel>before|after|of)\s+$", re.I)
_JA_DATE = re.compile(r"(?:(?P<year>\d{4})年)?(?P<month>\d{1,2})月(?:(?P<day>\d{1,2})日)?")

# Relative expressions in a line, resolved against the day it was said: (pattern, days back from, days back to)
_RELATIVE: Final = (
    (re.compile(r"\b(?:yesterday|last night)\b", re.I), 1, 1),
    (re.compile(r"\bday before yesterday\b|\btwo days ago\b", re.I), 2, 2),
    (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I), 0, 0),
    (re.compile(r"\b(?:last|past) week(?:end)?\b|\ba week ago\b", re.I), 9, 5),
    (re.compile(r"\b(?:the other day|recently|lately|just)\b", re.I), 7, 0),
    (re.compile(r"\b(?:last|past) month\b|\ba month ago\b", re.I), 45, 20),
    (re.compile(r"\b(?:last|past) year\b|\ba year ago\b", re.I), 500, 250),
    (re.compile(r"\bthis (?:week|weekend)\b", re.I), 6, 0),
    (re.compile(r"\btomorrow\b", re.I), -1, -1),
    (re.compile(r"\bnext (?:week|weekend)\b", re.I), -9, -5),
    (re.compile(r"\bnext month\b", re.I), -45, -20),
    (re.compile(r"昨日|昨晩|昨夜"), 1, 1),
    (re.compile(r"一昨日|おととい"), 2, 2),
    (re.compile(r"今日|今朝|今夜"), 0, 0),
    (re.compile(r"先週"), 9, 5),
    (re.compile(r"先月"), 45, 20),
    (re.compile(r"去年|昨年"), 500, 250),
    (re.compile(r"明日"), -1, -1),
    (re.compile(r"来週"), -9, -5),
)
_AGO = re.compile(r"\b(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple|few|several)"
                  r"(?:\s+of)?\s+(?P<unit>day|week|month|year)s?\s+ago\b", re.I)
_LAST_WEEKDAY = re.compile(r"\b(?:last|this past|on)\s+(?P<weekday>monday|tuesday|wednesday|thursday|friday|"
                           r"saturday|sunday)\b", re.I)
# Every expression above needs one of these words, a digit or one of these characters: a line with none (about four
# lines in five) talks about the day it was said, known in ~6 us instead of ~40-70 us for all the expressions
# (the same days as before for all 9,358 LoCoMo and JSQuAD lines and questions tried).
_TIME_WORDS: Final = frozenset((
    "yesterday", "night", "today", "tonight", "morning", "afternoon", "evening", "day", "days", "week", "weekend",
    "month", "year", "ago", "other", "recently", "lately", "just", "tomorrow", "next", "last", "past", "monday",
    "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
_LATIN_WORD = re.compile(r"[a-z]+")
_TIME_MARK = re.compile(r"[\d昨今先去明来]|おととい")


def _month_span(year: int, month: int) -> Span:
    start = dt.date(year, month, 1)
    end = dt.date(year + month // 12, month % 12 + 1, 1)
    return start, end


def _day(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def asked(question: str, today: dt.date, years: range | None = None) -> tuple[Span, ...]:
    """The days ``question`` names (none: ()). A date without a year is taken in every year of ``years`` (by
    default the ten years up to ``today``'s): "in June" is any June."""
    years = years or range(today.year - 9, today.year + 1)
    spans: list[Span] = []
    taken: list[tuple[int, int]] = []

    def free(match: re.Match[str]) -> bool:
        return all(match.end() <= a or match.start() >= b for a, b in taken)

    def add(match: re.Match[str], found: list[Span]) -> None:
        taken.append(match.span())
        before = question[: match.start()]
        part, around = _PART.search(before), _WEEK_BEFORE.search(before)
        for first, after in found:
            start, end = first, after
            if around is not None and around["rel"].lower() in ("before", "after"):
                length = dt.timedelta(days={"day": 1, "weekend": 3, "week": 7, "month": 31}[around["which"].lower()])
                start, end = (first - length, first) if around["rel"].lower() == "before" else (after, after + length)
            elif part is not None and (after - first).days > 20:
                third = (after - first) / 3
                which = part["part"].lower()
                if which in ("beginning", "start", "early"):
                    end = first + third
                elif which in ("end", "late"):
                    start = after - third
                else:
                    start, end = first + third, after - third
            spans.append((start, end))

    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for match in pattern.finditer(question):
            if not free(match):
                continue
            month, day = _MONTHS[match["month"].lower()], int(match["day"])
            found = [(d, d + dt.timedelta(days=1)) for y in ([int(match["year"])] if match["year"] else years)
                     if (d := _day(y, month, day)) is not None]
            if found:
                add(match, found)
    for match in _MONTH_YEAR.finditer(question):
        # "may" alone is a verb far more often than a month: only with a year, or after "in"/"of"/"during"
        word = match["month"].lower()
        if not free(match) or (not match["year"] and (word in ("may", "march", "jan", "mar", "dec", "sept")
                                                       or not re.search(r"\b(?:in|of|during|since|early|late|"
                                                                        r"mid|end|beginning|start)\s+$",
                                                                        question[: match.start()], re.I))):
            continue
        month = _MONTHS[word]
        add(match, [_month_span(y, month) for y in ([int(match["year"])] if match["year"] else years)])
    for match in _SEASON_YEAR.finditer(question):
        if not free(match):
            continue
        first, last = _SEASONS[match["season"].lower()]  # the first month and the month after the last
        add(match, [(dt.date(y, first, 1), dt.date(y + (last - 1) // 12, (last - 1) % 12 + 1, 1))
                    for y in ([int(match["year"])] if match["year"] else years)])
    for match in _BARE_YEAR.finditer(question):
        if free(match):
            year = int(match["year"])
            add(match, [(dt.date(year, 1, 1), dt.date(year + 1, 1, 1))])
    for match in _JA_DATE.finditer(question):
        if not free(match):
            continue
        month = int(match["month"])
        if not 1 <= month <= 12:
            continue
        ys = [int(match["year"])] if match["year"] else list(years)
        if match["day"]:
            add(match, [(d, d + dt.timedelta(days=1)) for y in ys if (d := _day(y, month, int(match["day"])))])
        else:
            add(match, [_month_span(y, month) for y in ys])
    return tuple(spans)


def talks_about(text: str, said: dt.date) -> Span:
    """The days a line said on ``said`` talks about: the earliest to the latest its time words point to (its
    own day when it has none). "We went last week" said on 21 Oct 2022: 12-16 Oct; "yesterday": 20 Oct."""
    if _TIME_MARK.search(text) is None and _TIME_WORDS.isdisjoint(_LATIN_WORD.findall(text.lower())):
        return said, said + dt.timedelta(days=1)
    days: list[dt.date] = []
    for pattern, back_from, back_to in _RELATIVE:
        if pattern.search(text):
            days += [said - dt.timedelta(days=back_from), said - dt.timedelta(days=back_to)]
    for match in _AGO.finditer(text):
        n = match["n"].lower()
        count = int(n) if n.isdigit() else _NUMBERS.get(n, 1)
        back = count * _UNIT_DAYS[match["unit"].lower()]
        days += [said - dt.timedelta(days=round(back * 1.3)), said - dt.timedelta(days=round(back * 0.7))]
    for match in _LAST_WEEKDAY.finditer(text):
        back = (said.weekday() - _WEEKDAYS[match["weekday"].lower()]) % 7 or 7
        days.append(said - dt.timedelta(days=back))
    for match in _DAY_MONTH.finditer(text):
        month, day = _MONTHS[match["month"].lower()], int(match["day"])
        year = int(match["year"]) if match["year"] else said.year
        if (d := _day(year, month, day)) is not None:
            days.append(d)
    if not days:
        return said, said + dt.timedelta(days=1)
    return min(days), max(days) + dt.timedelta(days=1)


def overlaps(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]
