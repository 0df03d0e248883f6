"""Long-term recall on LoCoMo: evidence recall@10 through ``madoi memory recall``, against BM25 in the same run.

Data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024; released by
Snap Research for research use): conversations of two people over up to 35 dated sessions, with questions whose
``evidence`` names the dialogue turns that answer them. For each conversation, in a Madoi home of its own:

1. its sessions are written in Madoi's JSON Lines format (one conversation per session; speaker A is the user,
   speaker B a companion whose id is B's name in lower case; a shared photo's caption follows the line as
   "[shares a photo: ...]"; each line 30 s after the one before from the session's date) and imported with
   ``madoi conversations import`` (stored, remembered by the companion, indexed by the app's own write path);
2. each question of categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop) is asked through
   ``madoi memory recall --companion B --jsonl --limit 10``; evidence recall@10 is the share of the question's
   evidence turns among the ten recalled;
3. the baseline: Okapi BM25 (k1 1.5, b 0.75; lower-cased words) over the same turns' texts as indexed
   ("Name: words"), in this process.

Figures: recall@10 per category and overall, Madoi and BM25, for all questions, for the two halves (even and odd
question numbers within each conversation; the ranking's constants were chosen on the even half and checked on
the odd one) and for each conversation (the lowest named); the import's lines/s when the homes were built;
p50/p95/p99 of the recall's own time (``elapsed_ms`` of the command: the search and the memory lookup, not the process
start). Then at scale: one conversation's home with synthetic lines added until ``--scale`` lines
are stored (sentences over the other conversations' words, said by the same two and heard by the companion, written
in bulk; their vectors are stand-ins drawn from a Gaussian fitted to the real line vectors, as bench/search_scale.py
does), the same questions asked again: recall@10 and p50/p95/p99 at that size, against the plain hybrid search
(``madoi search query``) over the same index in the same run. ``--notes-url`` also measures notes (measure_notes).

The homes are kept in ``--work`` (default ~/.cache/madoi-bench/memory-recall) and reused; ``--fresh`` builds them
again (importing the five conversations, 2,760 lines, took 91 s at load 5.5-6, 30 lines/s with five process starts;
one 3,000-line file 49 s at load 3.5-4.3).

Usage: python bench/memory_recall.py [--data DIR] [--work DIR] [--fresh] [--scale 100000]
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import hashlib
import json
import math
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _report import REPO

from companions.common.loop_health import percentile
from companions.search.tokenize import index_text

DATA = Path(os.environ.get("MADOI_LOCOMO", "/work/shared/data/locomo-dev"))
WORK = Path.home() / ".cache" / "madoi-bench" / "memory-recall"
VERSION = "1"  # the homes' layout; homes built by another version are built again
SCALE_VERSION = "2"  # the large history's; 2: other conversations' words
MADOI = str(Path(sys.executable).with_name("madoi"))
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LIMIT = 10


@dataclass
class Conversation:
    name: str
    user: str
    companion: str  # the companion's id (speaker B's name in lower case)
    turns: list[tuple[str, str, str]]  # (dia_id, speaker, indexed text "Name: words")
    sessions: list[dict[str, object]]  # the import file's lines
    questions: list[tuple[int, int, str, set[str]]]  # (number, category, question, evidence)


@dataclass
class Scores:
    by_category: dict[int, list[float]] = field(default_factory=lambda: collections.defaultdict(list))

    def add(self, category: int, evidence: set[str], ids: Sequence[str]) -> None:
        self.by_category[category].append(len(evidence & set(ids[:LIMIT])) / len(evidence))

    def overall(self) -> float:
        values = [v for vs in self.by_category.values() for v in vs]
        return statistics.mean(values) if values else float("nan")

    def category(self, category: int) -> float:
        values = self.by_category.get(category, [])
        return statistics.mean(values) if values else float("nan")


def line_text(turn: dict[str, str]) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def session_time(value: str) -> dt.datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" (local time)."""
    return dt.datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").astimezone()


def evidence_of(qa: dict[str, object]) -> set[str]:
    raw = qa.get("evidence") or []
    assert isinstance(raw, list)
    return {part.strip() for item in raw for part in str(item).replace(",", ";").split(";") if part.strip()}


def load(path: Path) -> Conversation:
    data = json.loads(path.read_text(encoding="utf-8"))
    user, other = str(data["speaker_a"]), str(data["speaker_b"])
    companion = re.sub(r"[^a-z0-9_-]", "", other.lower()) or "companion"
    turns: list[tuple[str, str, str]] = []
    sessions: list[dict[str, object]] = []
    n = 1
    while f"session_{n}" in data:
        start = session_time(data[f"session_{n}_date_time"])
        messages = []
        for i, turn in enumerate(data[f"session_{n}"]):
            sender = "user" if turn["speaker"] == user else companion
            messages.append({"id": turn["dia_id"], "from": sender, "to": [companion if sender == "user" else "user"],
                             "message": line_text(turn),
                             "time": (start + dt.timedelta(seconds=30 * i)).isoformat()})
            turns.append((turn["dia_id"], turn["speaker"], f"{turn['speaker'] if sender == 'user' else companion}: "
                                                             f"{line_text(turn)}"))
        sessions.append({"title": f"Session {n}", "messages": messages})
        n += 1
    questions = [(number, int(qa["category"]), str(qa["question"]), evidence_of(qa))
                 for number, qa in enumerate(data["qa"]) if int(qa["category"]) in CATEGORIES and evidence_of(qa)]
    return Conversation(path.stem, user, companion, turns, sessions, questions)


def environment(home: Path, conversation: Conversation) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MADOI_")}
    env.update(MADOI_HOME=str(home), MADOI_GENERAL_USER_NAME=conversation.user, MADOI_GENERAL_LANGUAGE="en",
               PYTHONPATH=str(REPO))
    return env


def build_home(home: Path, conversation: Conversation, source: Path, fresh: bool) -> float | None:
    """Imports ``conversation`` into ``home`` unless it holds it already; how long the import took (None: reused)."""
    stamp = hashlib.sha256(source.read_bytes() + VERSION.encode()).hexdigest()
    marker = home / "bench-stamp"
    if not fresh and marker.exists() and marker.read_text() == stamp:
        return None
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    file = home / "import.jsonl"
    file.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in conversation.sessions), encoding="utf-8")
    started = time.perf_counter()
    subprocess.run([MADOI, "conversations", "import", str(file)], env=environment(home, conversation), check=True)
    took = time.perf_counter() - started
    print(f"  imported {conversation.name} ({len(conversation.turns)} lines) in {took:.1f} s "
          f"({len(conversation.turns) / took:.1f} lines/s; load average {os.getloadavg()[0]:.2f})", flush=True)
    marker.write_text(stamp)
    return took


def ask(home: Path, conversation: Conversation, command: list[str],
        texts: Sequence[tuple[str, str]]) -> dict[str, dict[str, object]]:
    """Runs a ``--jsonl`` command over ``texts`` (id, text) after one warm-up query; the answers by id."""
    lines = [json.dumps({"id": "warm-up", "text": "hello, how have you been?"})]
    lines += [json.dumps({"id": ident, "text": text}) for ident, text in texts]
    done = subprocess.run([MADOI, *command], input="\n".join(lines) + "\n", env=environment(home, conversation),
                          capture_output=True, text=True, check=False)
    answers = {}
    for line in done.stdout.splitlines():
        obj = json.loads(line)
        answers[str(obj["id"])] = obj
    missing = [i for i, _ in texts if i not in answers]
    if missing or done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return answers


def recall(home: Path, conversation: Conversation) -> tuple[dict[str, list[str]], list[float]]:
    """Each question's recalled message ids, best first (a note stands for the lines it cites), and the times."""
    answers = ask(home, conversation, ["memory", "recall", "--companion", conversation.companion, "--jsonl",
                                       "--limit", str(LIMIT)],
                  [(str(number), question) for number, _, question, _ in conversation.questions])
    ids = {k: [m for r in v["recalled"] for m in (r.get("sources") or [r["message_id"]])]  # type: ignore[attr-defined]
           for k, v in answers.items() if k != "warm-up"}
    times = [float(v["elapsed_ms"]) for k, v in answers.items() if k != "warm-up"]  # type: ignore[arg-type]
    return ids, times


def search_times(home: Path, conversation: Conversation) -> list[float]:
    answers = ask(home, conversation, ["search", "query", "--jsonl", "--limit", str(LIMIT)],
                  [(str(number), question) for number, _, question, _ in conversation.questions])
    return [float(v["elapsed_ms"]) for k, v in answers.items() if k != "warm-up"]  # type: ignore[arg-type]


class BM25:
    """Okapi BM25 over the turns (k1 1.5, b 0.75, lower-cased alphanumeric words), the baseline."""

    def __init__(self, turns: Sequence[tuple[str, str, str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.ids = [t[0] for t in turns]
        self.docs = [collections.Counter(self.words(t[2])) for t in turns]
        self.lengths = np.array([sum(d.values()) for d in self.docs], dtype=np.float64)
        self.avg = float(self.lengths.mean())
        df = collections.Counter(w for d in self.docs for w in d)
        n = len(self.docs)
        self.idf = {w: math.log((n - c + 0.5) / (c + 0.5) + 1) for w, c in df.items()}
        self.k1, self.b = k1, b

    @staticmethod
    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    def top(self, query: str, k: int = LIMIT) -> list[str]:
        terms = set(self.words(query))
        scores = np.zeros(len(self.docs))
        for i, doc in enumerate(self.docs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
            scores[i] = sum(self.idf[w] * doc[w] * (self.k1 + 1) / (doc[w] + norm) for w in terms if w in doc)
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.ids[i] for i in order]


def table(title: str, rows: dict[str, tuple[Scores, Scores]]) -> None:
    print(f"\n{title}\n{'':22}" + "".join(f"{CATEGORIES[c]:>13}" for c in CATEGORIES) + f"{'overall':>10}  (questions)")
    for name, (madoi, bm25) in rows.items():
        for label, s in ((f"Madoi {name}", madoi), (f"BM25 {name}", bm25)):
            count = sum(len(v) for v in s.by_category.values())
            print(f"{label:22}" + "".join(f"{s.category(c):13.3f}" for c in CATEGORIES) + f"{s.overall():10.3f}"
                  f"  ({count})")


def grow(home: Path, conversation: Conversation, others: Sequence[Conversation], target: int, seed: int = 7) -> int:
    """Adds synthetic lines heard by the companion until ``target`` lines are stored; returns how many were added.

    The same two people talking about other things: sentences of 6-22 words drawn from the words of the ``others``
    conversations (other people's topics, not this one's), said by the user and the companion in turn. Written in
    bulk (not through the app's per-document write path, which would take hours of embedding): 200 lines per
    synthetic conversation, their FTS5 terms computed, their vectors drawn from a Gaussian fitted to the stored real
    line vectors (so they crowd the real ones in the semantic channel), the conversations, messages and memory rows
    in the main database."""
    rng = random.Random(seed)
    search = sqlite3.connect(home / "search.sqlite3")
    main = sqlite3.connect(home / "madoi.sqlite3")
    stored = int(search.execute("SELECT COUNT(*) FROM chunk_lines").fetchone()[0])
    if stored >= target:
        return 0
    blobs = [r[0] for r in search.execute("SELECT embedding FROM chunks WHERE embedding IS NOT NULL")]
    real = np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])
    mean, cov = real.mean(axis=0), np.cov(real, rowvar=False)
    np_rng = np.random.default_rng(seed)
    words = [w for other in others for _, _, text in other.turns for w in text.split(": ", 1)[-1].split()]
    seq = int(main.execute("SELECT COALESCE(MAX(seq), 0) FROM companion_memory WHERE companion_id = ?",
                           (conversation.companion,)).fetchone()[0])
    base = dt.datetime(2019, 1, 1).timestamp()
    added = 0
    names = {"user": conversation.user, conversation.companion: conversation.companion}
    while stored + added < target:
        n = min(200, target - stored - added)
        vectors = np_rng.multivariate_normal(mean, cov, size=n).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        main.execute("BEGIN")
        search.execute("BEGIN")
        at = base + added * 60.0
        cid = main.execute("INSERT INTO conversations(title, created_at, updated_at) VALUES (?, ?, ?)",
                           (f"synthetic {added // 200}", at, at + n * 60)).lastrowid
        doc = search.execute("INSERT INTO documents(source, title, kind, content_hash, indexed_at) VALUES (?, ?, "
                             "'conversation', ?, ?)", (f"conversation:{cid}", f"conversation {cid}",
                                                       f"synthetic-{cid}", time.time())).lastrowid
        for i in range(n):
            sender = "user" if i % 2 == 0 else conversation.companion
            text = " ".join(rng.choice(words) for _ in range(rng.randint(6, 22)))
            mid = f"syn-{cid}-{i}"
            when = at + i * 60.0
            speaker = conversation.user if sender == "user" else conversation.companion
            main.execute("INSERT INTO messages(conversation_id, id, sender, recipients, text, created_at) VALUES "
                         "(?, ?, ?, ?, ?, ?)", (cid, mid, speaker, "[]", text, when))
            seq += 1
            main.execute("INSERT INTO companion_memory (companion_id, seq, role, speaker_id, speaker_name, text, "
                         "message_id, at, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (conversation.companion, seq, "said" if sender != "user" else "heard", speaker,
                          names[sender], text, mid, when, cid))
            line = f"{speaker}: {text}"
            chunk = search.execute("INSERT INTO chunks(doc_id, ord, text, embedding) VALUES (?, ?, ?, ?)",
                                   (doc, i, line, vectors[i].tobytes())).lastrowid
            search.execute("INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)", (chunk, index_text(line)))
            search.execute("INSERT INTO chunk_lines(chunk_id, message_id, speaker, at) VALUES (?, ?, ?, ?)",
                           (chunk, mid, speaker, when))
        main.execute("COMMIT")
        search.execute("COMMIT")
        added += n
    main.close()
    search.close()
    return added


class _Writer:
    """The companion as NoteWriter sees it: an id and a model."""

    def __init__(self, companion_id: str, model: object) -> None:
        self.id, self.model = companion_id, model


def measure_notes(args: argparse.Namespace, conversations: dict[str, Conversation]) -> None:
    """Notes written by a real model for every session of one conversation (a copy of its home), then the same
    questions asked again: recall@10 with notes (a note in the ten counts for the lines it cites) against without."""
    import asyncio

    conversation = conversations[args.notes_conversation]
    plain = args.work / conversation.name
    home = args.work / f"notes-{conversation.name}"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(plain, home)

    async def write() -> tuple[int, float, int]:
        from app.memory.cli import memory_parts
        from app.memory.notes import NotesStore, NoteWriter
        from companions.llm.openai_backend import OpenAIChatModel
        from companions.wire.bus import InProcessBus

        os.environ.update(environment(home, conversation))
        model = OpenAIChatModel(base_url=args.notes_url, model=args.notes_model, timeout_s=600)
        async with memory_parts() as parts:
            notes = NotesStore(parts.loaded.paths.database)
            writer = NoteWriter(notes, parts.memory, parts.engine, InProcessBus(),
                                [_Writer(conversation.companion, model)],  # type: ignore[arg-type]
                                current=lambda: None, enabled=lambda: True, memory_on=lambda _c: True,
                                user_id=lambda: conversation.user, language=lambda: "en")
            started, written, sessions = time.perf_counter(), 0, 0
            for info in await parts.store.list_conversations():
                written += len(await writer.write(info.id))
                sessions += 1
            notes.close()
            return written, time.perf_counter() - started, sessions

    written, took, sessions = asyncio.run(write())
    with_notes, _ = recall(home, conversation)
    without, _ = recall(plain, conversation)
    a, b = Scores(), Scores()
    for number, category, _, evidence in conversation.questions:
        a.add(category, evidence, with_notes[str(number)])
        b.add(category, evidence, without[str(number)])
    print(f"\nnotes: {written} notes from {sessions} sessions of {conversation.name} in {took:.0f} s "
          f"({args.notes_model} at {args.notes_url}); load average {os.getloadavg()[0]:.2f}")
    for label, scores in (("without notes", b), ("with notes", a)):
        print(f"{label:22}" + "".join(f"{scores.category(c):13.3f}" for c in CATEGORIES) + f"{scores.overall():10.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--fresh", action="store_true", help="build the homes again")
    parser.add_argument("--scale", type=int, default=100_000, help="stored lines at scale (0: skip)")
    parser.add_argument("--notes-url", help="also measure notes about the user, written by the model at this "
                                            "OpenAI-compatible URL (one conversation: --notes-conversation)")
    parser.add_argument("--notes-model", default="default", help="the model's name at --notes-url")
    parser.add_argument("--notes-conversation", default="conv-30", help="the conversation notes are measured on")
    args = parser.parse_args()
    files = sorted(args.data.glob("*.json"))
    if not files:
        print(f"no conversations in {args.data}", file=sys.stderr)
        return 2
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    rows = {"all": (Scores(), Scores()), "even (tuned)": (Scores(), Scores()), "odd (held out)": (Scores(), Scores())}
    times: list[float] = []
    conversations = []
    per_conversation: dict[str, tuple[Scores, Scores]] = {}
    imports: list[tuple[int, float]] = []  # (lines, seconds) of the homes built in this run
    for file in files:
        conversation = load(file)
        conversations.append((file, conversation))
        home = args.work / conversation.name
        took_import = build_home(home, conversation, file, args.fresh)
        if took_import is not None:
            imports.append((len(conversation.turns), took_import))
        recalled, took = recall(home, conversation)
        times += took
        bm25 = BM25(conversation.turns)
        mine = per_conversation[conversation.name] = (Scores(), Scores())
        for number, category, question, evidence in conversation.questions:
            ours, theirs = recalled[str(number)], bm25.top(question)
            for name in ("all", "odd (held out)" if number % 2 else "even (tuned)"):
                rows[name][0].add(category, evidence, ours)
                rows[name][1].add(category, evidence, theirs)
            mine[0].add(category, evidence, ours)
            mine[1].add(category, evidence, theirs)
        print(f"  {conversation.name}: {len(conversation.questions)} questions, recall@10 so far "
              f"{rows['all'][0].overall():.3f} (BM25 {rows['all'][1].overall():.3f})", flush=True)
    if imports:
        lines, seconds = sum(n for n, _ in imports), sum(t for _, t in imports)
        print(f"\nimport: {lines} lines in {seconds:.1f} s, {lines / seconds:.1f} lines/s (each home's whole "
              f"`madoi conversations import`, process start included)", flush=True)
    table("evidence recall@10 (LoCoMo categories 1-4)", rows)
    table("per conversation", per_conversation)
    lowest = min(per_conversation, key=lambda name: per_conversation[name][0].overall())
    print(f"\nlowest conversation: {lowest} {per_conversation[lowest][0].overall():.3f} (BM25 "
          f"{per_conversation[lowest][1].overall():.3f})")
    print(f"\nrecall time over {len(times)} questions ({sum(len(c.turns) for _, c in conversations)} lines in "
          f"{len(conversations)} homes): p50 {percentile(times, 0.5):.1f} ms, p95 {percentile(times, 0.95):.1f} ms, "
          f"p99 {percentile(times, 0.99):.1f} ms; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)

    if args.notes_url:
        measure_notes(args, dict((c.name, c) for _, c in conversations))
    if args.scale:
        file, conversation = conversations[0]
        home = args.work / f"scale-{args.scale}-{conversation.name}"
        stamp = (args.work / conversation.name / "bench-stamp").read_text() + f":{SCALE_VERSION}"
        if args.fresh or not (home / "scale-stamp").exists() or (home / "scale-stamp").read_text() != stamp:
            shutil.rmtree(home, ignore_errors=True)
            shutil.copytree(args.work / conversation.name, home)
            started = time.perf_counter()
            added = grow(home, conversation, [c for _, c in conversations[1:]], args.scale)
            print(f"\n  {added} synthetic lines added in {time.perf_counter() - started:.0f} s", flush=True)
            (home / "scale-stamp").write_text(stamp)
        recalled, took = recall(home, conversation)
        searched = search_times(home, conversation)
        scale = Scores()
        for number, category, _, evidence in conversation.questions:
            scale.add(category, evidence, recalled[str(number)])
        small = rows["all"][0]
        conv_small = Scores()
        recalled_small, took_small = recall(args.work / conversation.name, conversation)
        for number, category, _, evidence in conversation.questions:
            conv_small.add(category, evidence, recalled_small[str(number)])
        print(f"\nat {args.scale:,} stored lines ({conversation.name}'s questions, its {len(conversation.turns)} real "
              f"lines among them): recall@10 {scale.overall():.3f} (the same questions on its own history "
              f"{conv_small.overall():.3f}; all five {small.overall():.3f})")
        p50, p99 = percentile(took, 0.5), percentile(took, 0.99)
        s50, s99 = percentile(searched, 0.5), percentile(searched, 0.99)
        print(f"recall p50 {p50:.1f} ms, p95 {percentile(took, 0.95):.1f} ms, p99 {p99:.1f} ms; plain hybrid search "
              f"of the same index in the same run "
              f"p50 {s50:.1f} ms, p99 {s99:.1f} ms (recall/search p50 {p50 / s50:.2f}x); on its own history recall "
              f"p50 {percentile(took_small, 0.5):.1f} ms; load average {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
