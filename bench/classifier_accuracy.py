"""Query classifier accuracy per type on the held-out split: Madoi's rules vs the seed's plain rules, same run.

Data: JEMHopQA train v1.2 (Ishii et al., CC BY-SA 4.0; ``comparison`` questions are relationship queries,
``compositional`` ones are local) and the queries written for Madoi in tests/data/classifier_*.jsonl: thematic
(global) ones, English ones of every type, and composite (hybrid) ones in Japanese and English. The split is fixed
by a hash of each question's id: about 70 % tune, 30 % held out. The rules were tuned on the tune split only.

A second, separate evaluation (``--written dev|heldout|fresh``): questions written for it, unlike any of the data
above (everyday notes, diaries, minutes, mail, reviews, logs; casual and polite, imperative, question and bare noun
phrase), in three files: ``dev`` (tuned on, five rounds), ``heldout`` (192, 24 per type and language: held out in
rounds 1-3, its errors read in round 4, tuning data since), ``fresh`` (158, 19-20 per type and language: written and
committed before round 4, never tuned on; its errors are never printed). See
tests/companions/search/test_classifier_written.py for how they were made and the figures.

Usage: ``python bench/classifier_accuracy.py [--split heldout|tune|all] [--errors N] [--written dev|heldout|fresh]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._report import REPO, report
from companions.search.classify.query_classifier import QueryType, RuleBasedClassifier, SeedRules

Split = Literal["tune", "heldout", "all"]
JEMHOPQA = Path(os.environ.get("MADOI_JEMHOPQA", REPO.parent / "shared" / "data" / "jemhopqa-train-v1.2.json"))
# Written for Madoi: thematic (global) queries in Japanese and English; English local and relationship queries;
# composite (hybrid) questions in both: a whole collection and the causes or relations behind it.
_DATA = REPO / "tests" / "data"
OWN_QUERIES = (_DATA / "classifier_global.jsonl", _DATA / "classifier_english.jsonl",
               _DATA / "classifier_hybrid.jsonl")
CREDIT = "JEMHopQA (Ishii et al., CC BY-SA 4.0) + Madoi's own queries (tests/data/classifier_*.jsonl)"
_JEMHOPQA_TYPES: dict[str, QueryType] = {"comparison": "relationship", "compositional": "local"}


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    id: str
    text: str
    expected: QueryType
    source: str  # "jemhopqa", "own-ja" or "own-en"


def in_heldout(query_id: str) -> bool:
    """The fixed split: 3 buckets of 10 by the SHA-256 of the id are held out."""
    return int(hashlib.sha256(query_id.encode()).hexdigest(), 16) % 10 < 3


def load_queries(split: Split) -> list[LabelledQuery]:
    """The labelled queries of ``split``. Raises FileNotFoundError when the JEMHopQA file is not there."""
    queries = [LabelledQuery(q["qid"], q["question"], _JEMHOPQA_TYPES[q["type"]], "jemhopqa")
               for q in json.loads(JEMHOPQA.read_text(encoding="utf-8"))]
    for path in OWN_QUERIES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                queries.append(LabelledQuery(row["id"], row["question"], row["type"], f"own-{row['lang']}"))
    if split == "all":
        return queries
    return [q for q in queries if in_heldout(q.id) == (split == "heldout")]


WRITTEN = {"heldout": _DATA / "classifier_heldout.jsonl", "dev": _DATA / "classifier_dev.jsonl",
           "fresh": _DATA / "classifier_fresh.jsonl"}
TYPES: tuple[QueryType, ...] = ("local", "global", "relationship", "hybrid")


def load_written(which: str) -> list[LabelledQuery]:
    """The issue-16 questions of ``which`` ("heldout" or "dev")."""
    rows = [json.loads(line) for line in WRITTEN[which].read_text(encoding="utf-8").splitlines() if line.strip()]
    return [LabelledQuery(r["id"], r["question"], r["type"], f"own-{r['lang']}") for r in rows]


def accuracy_by_type_and_language(classifier: RuleBasedClassifier | SeedRules, queries: list[LabelledQuery],
                                  ) -> dict[tuple[str, str], float]:
    """Accuracy per (type, language), with "all" standing for every type or every language."""
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for q in queries:
        ok = classifier.classify_now(q.text).type == q.expected
        lang = q.source.removeprefix("own-")
        for key in ((q.expected, lang), (q.expected, "all"), ("all", lang), ("all", "all")):
            hits[key].append(ok)
    return {k: sum(v) / len(v) for k, v in hits.items()}


def accuracy_by_type(classifier: RuleBasedClassifier | SeedRules,
                     queries: list[LabelledQuery]) -> tuple[dict[str, float], list[tuple[LabelledQuery, str]]]:
    """Accuracy per expected type, per language and overall ("all"), and the misclassified queries."""
    hits: dict[str, list[bool]] = defaultdict(list)
    errors: list[tuple[LabelledQuery, str]] = []
    for q in queries:
        got = classifier.classify_now(q.text).type
        hits[q.expected].append(got == q.expected)
        hits["all"].append(got == q.expected)
        hits["english" if q.source == "own-en" else "japanese"].append(got == q.expected)
        if got != q.expected:
            errors.append((q, got))
    return {k: sum(v) / len(v) for k, v in sorted(hits.items())}, errors


def time_per_query(classifier: RuleBasedClassifier | SeedRules, queries: list[LabelledQuery],
                   repeats: int = 5) -> float:
    """Seconds per query, the best of ``repeats`` passes (after one warm-up pass: fugashi's tagger loads once)."""
    for q in queries:
        classifier.classify_now(q.text)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for q in queries:
            classifier.classify_now(q.text)
        best = min(best, (time.perf_counter() - started) / len(queries))
    return best


def entity_recall(classifier: RuleBasedClassifier | SeedRules, split: Split) -> float:
    """Share of the two compared things of JEMHopQA comparison questions found among the extracted entities.

    The gold things are the subjects of the question's derivations, without Wikipedia's disambiguation suffix
    ("SEVENTEEN (音楽グループ)"); an extracted entity counts when it equals, contains or is part of one (>= 2 chars).
    """
    found = total = 0
    for q in json.loads(JEMHOPQA.read_text(encoding="utf-8")):
        if q["type"] != "comparison" or (split != "all" and in_heldout(q["qid"]) != (split == "heldout")):
            continue
        entities = classifier.classify_now(q["question"]).extracted_entities
        for gold in {d[0].split(" (")[0] for d in q["derivations"]}:
            total += 1
            found += any(gold in e or (len(e) >= 2 and e in gold) for e in entities)
    return found / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["heldout", "tune", "all"], default="heldout")
    parser.add_argument("--errors", type=int, default=0, help="print this many of Madoi's misclassifications")
    parser.add_argument("--written", choices=sorted(WRITTEN), help="the issue-16 questions instead (see above)")
    args = parser.parse_args()
    if args.written:
        written = load_written(args.written)
        ours_table = accuracy_by_type_and_language(RuleBasedClassifier(), written)
        seed_table = accuracy_by_type_and_language(SeedRules(), written)
        print(f"# query classifier accuracy on the written {args.written} questions ({len(written)})")
        for t in (*TYPES, "all"):
            for lang in ("ja", "en", "all"):
                report(f"classifier accuracy {t} {lang} ({args.written})", ours_table[(t, lang)], "fraction",
                       "seed rules", seed_table[(t, lang)])
        print("| type | ja | en | both | seed rules (both) |\n| --- | --- | --- | --- | --- |")
        for t in (*TYPES, "all"):
            cells = " | ".join(f"{ours_table[(t, lang)]:.3f}" for lang in ("ja", "en", "all"))
            print(f"| {t} | {cells} | {seed_table[(t, 'all')]:.3f} |")
        ours_s, seed_s = time_per_query(RuleBasedClassifier(), written), time_per_query(SeedRules(), written)
        report("rule classifier time per query", ours_s * 1000, "ms", "seed rules", seed_s * 1000)
        if args.written != "fresh":  # the fresh held-out questions' errors are never printed
            _, errors = accuracy_by_type(RuleBasedClassifier(), written)
            for q, got in errors[: args.errors]:
                print(f"  {q.source} expected={q.expected} got={got}: {q.text}")
        return
    queries = load_queries(args.split)
    counts = {t: sum(q.expected == t for q in queries) for t in ("global", "local", "relationship", "hybrid")}
    print(f"# query classifier accuracy, {args.split} split, {len(queries)} queries {counts}")
    print(f"# data: {CREDIT}")
    seed, _ = accuracy_by_type(SeedRules(), queries)
    ours_classifier = RuleBasedClassifier()
    started = time.perf_counter()
    ours, errors = accuracy_by_type(ours_classifier, queries)
    per_query_ms = (time.perf_counter() - started) * 1000 / len(queries)
    for key in ("global", "relationship", "local", "hybrid", "japanese", "english", "all"):
        report(f"classifier accuracy {key} ({args.split})", ours[key], "fraction", "seed rules", seed[key])
    report(f"entity recall on comparison questions ({args.split})", entity_recall(ours_classifier, args.split),
           "fraction", "seed rules", entity_recall(SeedRules(), args.split))
    report("rule classifier time per query", per_query_ms, "ms")
    for q, got in errors[: args.errors]:
        print(f"  {q.source} expected={q.expected} got={got}: {q.text}")


if __name__ == "__main__":
    main()
