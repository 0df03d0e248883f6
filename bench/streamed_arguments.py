"""Following the ``speak`` call's message while its JSON arguments stream (companions/companion/speech_stream.py).

A long streamed argument is fed to :class:`MessageFieldExtractor` in token-sized fragments (1-6 characters,
seeded), as a model's server sends them; the figures (medians of 30 runs) are the time to follow the whole argument
and the time of its last fragment (the message is the last key: the longest single step for a reader that re-reads
what came before). The baseline in the same run is one ``json.loads`` of the whole argument (what reading it once
at the end costs). Arguments: a line of 400 characters (the longest line a companion may say), the same with every
non-ASCII character escaped (``\\uXXXX``, as some servers send it), and one of 4,000 characters (ten times that).

Compare two versions of the reader with bench/against.py (the other checkout's copy of this script runs its reader):
    git clone -q . /tmp/parent && git -C /tmp/parent checkout -q <rev>
    .venv/bin/python bench/against.py /tmp/parent bench/streamed_arguments.py --rounds 3
"""

from __future__ import annotations

import json
import random
import statistics
import time

from _report import report

from companions.companion.speech_stream import MessageFieldExtractor

REPEATS = 30
SENTENCE = 'ねえ、それって本当に"すごい"ね！ I mean it\\really/ works.\n明日も一緒に行こうよ😀 '


def argument(chars: int, *, ascii_only: bool) -> str:
    message = (SENTENCE * (chars // len(SENTENCE) + 1))[:chars]
    return json.dumps({"emotion": "happy", "to": ["akari"], "message": message}, ensure_ascii=ascii_only)


def fragments(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        size = rng.randint(1, 6)
        out.append(text[i:i + size])
        i += size
    return out


def follow(pieces: list[str]) -> tuple[float, float, str]:
    """Seconds for the whole argument and for its last fragment (the message is the last key), and the text
    followed."""
    extractor = MessageFieldExtractor()
    start = time.perf_counter()
    for piece in pieces[:-1]:
        extractor.feed(piece)
    before = time.perf_counter()
    extractor.feed(pieces[-1])
    end = time.perf_counter()
    return end - start, end - before, extractor.text


def loads_once(text: str) -> float:
    start = time.perf_counter()
    for _ in range(100):
        json.loads(text)
    return (time.perf_counter() - start) / 100


def main() -> None:
    for name, chars, ascii_only in (("line_400", 400, False), ("line_400_escaped", 400, True),
                                    ("line_4000", 4000, False)):
        text = argument(chars, ascii_only=ascii_only)
        expected = json.loads(text)["message"]
        totals, lasts = [], []
        for seed in range(REPEATS):
            total, last, followed = follow(fragments(text, seed))
            if followed != expected:
                raise SystemExit(f"{name}: the reader followed {followed[:40]!r}..., not the message")
            totals.append(total)
            lasts.append(last)
        baseline = loads_once(text) * 1e6
        print(f"# {name}: {len(text)} characters of JSON in about {len(text) // 3.5:.0f} fragments")
        report(f"{name}_follow", statistics.median(totals) * 1e6, "us", "one json.loads", baseline)
        report(f"{name}_last_fragment", statistics.median(lasts) * 1e6, "us", "one json.loads", baseline)


if __name__ == "__main__":
    main()
