"""The rule classifier on questions written for issue 16, unlike its tuning data (everyday notes, diaries, minutes,
mail; casual and polite; 24 per type and language held out in tests/data/classifier_heldout.jsonl).

The rules were changed looking only at tests/data/classifier_dev.jsonl (156 questions, written in three rounds);
the held-out file was scored before and after each round, its errors never printed (its author wrote both files, so
it is held out from the tuning, not from its writer's memory). Measured 2026-11-24 on the held-out file:

| type | ja | en | both | before (both) |
| --- | --- | --- | --- | --- |
| local | 1.000 | 1.000 | 1.000 | 1.000 |
| global | 0.750 | 0.958 | 0.854 | 0.229 |
| relationship | 0.875 | 0.708 | 0.792 | 0.688 |
| hybrid | 0.958 | 0.917 | 0.938 | 0.500 |
| all | 0.896 | 0.896 | 0.896 | 0.604 |

Issue 16 asks for 0.80 on every type: global in Japanese (0.75), relationship in English (0.71) and so relationship
over both languages (0.79) are short of it. The floors below are the measured figures less one question, so that a
change that loses held-out questions fails.
"""

from __future__ import annotations

from bench.classifier_accuracy import accuracy_by_type_and_language, load_written
from companions.search.classifier import RuleBasedClassifier

FLOORS = {
    ("local", "all"): 0.97, ("global", "all"): 0.83, ("relationship", "all"): 0.77, ("hybrid", "all"): 0.91,
    ("global", "ja"): 0.70, ("global", "en"): 0.91, ("relationship", "ja"): 0.83, ("relationship", "en"): 0.66,
    ("hybrid", "ja"): 0.91, ("hybrid", "en"): 0.87, ("all", "all"): 0.89,
}


def test_written_held_out_questions_stay_above_the_measured_floors() -> None:
    table = accuracy_by_type_and_language(RuleBasedClassifier(), load_written("heldout"))
    low = {key: round(table[key], 3) for key, floor in FLOORS.items() if table[key] < floor}
    assert not low, f"below the measured floors: {low}"


def test_written_dev_questions_are_all_classified() -> None:
    table = accuracy_by_type_and_language(RuleBasedClassifier(), load_written("dev"))
    assert table[("all", "all")] == 1.0


def test_the_held_out_and_dev_questions_do_not_overlap() -> None:
    held_out = {q.text for q in load_written("heldout")}
    dev = {q.text for q in load_written("dev")}
    assert len(held_out) == 192
    assert not held_out & dev
