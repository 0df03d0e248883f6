"""The rule classifier on questions written to evaluate it, unlike its tuning data (everyday notes, diaries, minutes,
mail, reviews, logs; casual and polite; imperative, question and bare noun phrase).

Three files, all written by the engineers who changed the rules (so held out from the tuning, not from the writer's
memory):
- tests/data/classifier_dev.jsonl: the questions the rules were tuned on, in five rounds;
- tests/data/classifier_heldout.jsonl (192, 24 per type and language): held out during rounds 1-3; its errors were
  read in round 4, so it is tuning data now;
- tests/data/classifier_fresh.jsonl (158: 20 per type and language, 19 for Japanese relationship and English local
  questions): written and committed before round 4 began; rounds 4 and 5 looked only at the two files above and at
  new dev questions. It was scored three times (before round 4, after it, after round 5), its errors never printed.
  Two of its 160 questions turned out to repeat held-out questions word for word (the same writer, twice) and were
  taken out after the last scoring. Measured 2026-11-24:

| type | ja | en | both | before round 4 (both) |
| --- | --- | --- | --- | --- |
| local | 1.000 | 1.000 | 1.000 | 1.000 |
| global | 0.800 | 0.950 | 0.875 | 0.650 |
| relationship | 0.895 | 0.950 | 0.923 | 0.667 |
| hybrid | 0.950 | 0.950 | 0.950 | 0.875 |
| all | 0.911 | 0.962 | 0.937 | 0.797 |

(After round 4, on the 160: global 0.80 / 0.95, relationship 0.70 / 0.95, hybrid 0.95 / 0.95, all 0.913.)
The goal is 0.80 on every type. The floors below are the measured figures less one question, and never below
0.80, so that a change that loses a fresh question where the margin is gone (global in Japanese) fails.
"""

from __future__ import annotations

from bench.classifier_accuracy import accuracy_by_type_and_language, load_written
from companions.search.classify.query_classifier import RuleBasedClassifier

FLOORS = {
    ("local", "ja"): 0.95, ("local", "en"): 0.94, ("global", "ja"): 0.80, ("global", "en"): 0.90,
    ("relationship", "ja"): 0.84, ("relationship", "en"): 0.90, ("hybrid", "ja"): 0.90, ("hybrid", "en"): 0.90,
    ("all", "all"): 0.93,
}


def test_fresh_held_out_questions_stay_above_the_floors() -> None:
    table = accuracy_by_type_and_language(RuleBasedClassifier(), load_written("fresh"))
    low = {key: round(table[key], 3) for key, floor in FLOORS.items() if table[key] < floor - 1e-9}
    assert not low, f"below the floors: {low}"


def test_every_tuning_question_is_classified_as_labelled() -> None:
    for which in ("dev", "heldout"):
        table = accuracy_by_type_and_language(RuleBasedClassifier(), load_written(which))
        assert table[("all", "all")] == 1.0, which


def test_the_written_files_do_not_overlap() -> None:
    files = {which: {q.text for q in load_written(which)} for which in ("dev", "heldout", "fresh")}
    assert len(files["heldout"]) == 192
    assert len(files["fresh"]) == 158
    assert not files["heldout"] & files["dev"]
    assert not files["fresh"] & (files["dev"] | files["heldout"])
