"""The graph channel: entity/relation extraction, personalized PageRank and communities.

The heuristic extractor needs no model: Japanese noun phrases come from MeCab (runs of nouns that are proper nouns,
compounds or katakana words), English entities are capitalised phrases. Two entities mentioned in the same sentence
are related ("co-occurs"). When a ChatModel is configured the engine asks it instead (see ``llm_extraction``).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from companions.search.tokenize import _tagger, normalize

MAX_ENTITIES_PER_CHUNK = 24
_SENTENCE = re.compile(r"(?<=[。！？!?\n])|(?<=\.)\s+")
_EN_ENTITY = re.compile(r"\b[A-Z][A-Za-z0-9&'’-]*(?:\s+(?:of|the|de|von|and)?\s*[A-Z][A-Za-z0-9&'’-]*)*")
_EN_SKIP = frozenset({
    "The", "A", "An", "This", "That", "These", "Those", "What", "Which", "Who", "Whom", "Whose", "When",
    "Where", "Why", "How", "It", "Its", "In", "On", "At", "For", "And", "But", "Or", "If", "Is", "Are", "Was",
    "Were", "Do", "Does", "Did", "Can", "Could", "Will", "Would", "Should", "May", "Might", "I", "We", "You",
    "He", "She", "They", "Our", "My", "Your", "Compare", "Tell", "Explain", "Describe", "Summarize",
    "Summarise", "Give", "List", "Please"
})
_HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_KATAKANA = re.compile(r"^[\u30a0-\u30ffー]{3,}$")


@dataclass(frozen=True)
class Extraction:
    """Entities (display names) and relations (source, target, label) found in one chunk."""

    entities: tuple[str, ...] = ()
    relations: tuple[tuple[str, str, str], ...] = ()


def entity_key(name: str) -> str:
    """The identity of an entity: NFKC, lower case, no spaces (so 'Open AI' and 'OpenAI' meet)."""
    return re.sub(r"\s+", "", normalize(name))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _japanese_phrases(sentence: str) -> list[str]:
    tagger = _tagger()
    if tagger is None:
        return []
    out: list[str] = []
    run: list[str] = []
    proper = False

    def flush() -> None:
        nonlocal proper
        phrase = "".join(run)
        if run and (proper or len(run) >= 2 or _KATAKANA.match(phrase)) and len(phrase) >= 2:
            out.append(phrase)
        run.clear()
        proper = False

    for node in tagger(sentence):  # type: ignore[operator]
        feature = node.feature
        pos1, pos2 = str(feature.pos1 or ""), str(feature.pos2 or "")
        if (pos1 == "名詞" and pos2 not in ("代名詞", "数詞")) or (pos1 == "接尾辞" and run):
            run.append(str(node.surface))
            proper = proper or pos2 == "固有名詞"
        else:
            flush()
    flush()
    return out


def _english_phrases(sentence: str) -> list[str]:
    out = []
    for match in _EN_ENTITY.finditer(sentence):
        words = match.group(0).split()
        while words and words[0] in _EN_SKIP:
            words = words[1:]
        while words and words[-1].lower() in ("of", "the", "de", "von", "and"):
            words = words[:-1]
        if words and len(" ".join(words)) >= 2:
            out.append(" ".join(words))
    return out


def extract_heuristic(text: str) -> Extraction:
    """Entities and same-sentence co-occurrence relations of ``text``, without a model."""
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}
    per_sentence: list[list[str]] = []
    for sentence in sentences(text):
        found = _english_phrases(sentence)
        if _HAS_CJK.search(sentence):
            found += [p for p in _japanese_phrases(sentence) if _HAS_CJK.search(p)]
        keys = []
        for name in found:
            key = entity_key(name)
            names.setdefault(key, name)
            counts[key] += 1
            keys.append(key)
        per_sentence.append(keys)
    kept = {key for key, _ in counts.most_common(MAX_ENTITIES_PER_CHUNK)}
    relations: dict[tuple[str, str], None] = {}
    for keys in per_sentence:
        uniq = sorted({k for k in keys if k in kept})
        for i, a in enumerate(uniq):
            for b in uniq[i + 1 :]:
                relations.setdefault((a, b), None)
    return Extraction(
        entities=tuple(names[k] for k in sorted(kept)),
        relations=tuple((names[a], names[b], "co-occurs") for a, b in relations),
    )


def query_candidates(text: str) -> list[str]:
    """Entity keys a query may name: extracted phrases plus single words and adjacent word pairs."""
    from companions.search.tokenize import words

    ext = extract_heuristic(text)
    ws = words(text)
    cands = [entity_key(e) for e in ext.entities] + ws + [a + b for a, b in itertools.pairwise(ws)]
    for quoted in re.findall(r"[「『\"']([^」』\"']+)[」』\"']", text):
        cands.append(entity_key(quoted))
    return list(dict.fromkeys(c for c in cands if len(c) >= 2))


@dataclass
class EntityGraph:
    """An undirected weighted entity graph in compressed sparse rows (edges sorted by source), for fast PageRank."""

    entity_ids: npt.NDArray[np.int64]
    src: npt.NDArray[np.int64]  # indices into entity_ids; both directions are stored
    dst: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    index: dict[int, int] = field(default_factory=dict)
    indptr: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    norm: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))  # weight / source's total weight

    @classmethod
    def build(cls, entity_ids: Iterable[int], edges: Iterable[tuple[int, int, float]]) -> EntityGraph:
        ids = np.fromiter(entity_ids, dtype=np.int64)
        index = {int(e): i for i, e in enumerate(ids)}
        s, d, w = [], [], []
        for a, b, weight in edges:
            ia, ib = index.get(a), index.get(b)
            if ia is None or ib is None or ia == ib:
                continue
            s += [ia, ib]
            d += [ib, ia]
            w += [weight, weight]
        src, dst, wt = np.array(s, dtype=np.int64), np.array(d, dtype=np.int64), np.array(w, dtype=np.float64)
        order = np.argsort(src, kind="stable")
        src, dst, wt = src[order], dst[order], wt[order]
        n = len(ids)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        out_weight = np.bincount(src, weights=wt, minlength=n)
        norm = wt / out_weight[src] if len(wt) else wt
        return cls(ids, src, dst, wt, index, indptr, norm)

    def __len__(self) -> int:
        return int(self.entity_ids.shape[0])

    def personalized_pagerank(self, seeds: Sequence[int], alpha: float = 0.5, epsilon: float = 1e-5,
                              top: int | None = None) -> dict[int, float]:
        """PageRank restarting at the ``seeds`` (entity ids): entity id -> score, the ``top`` best (or all non-zero).

        ``alpha`` (the probability of following an edge rather than jumping back to a seed) is 0.5, lower than the
        web's 0.85: for retrieval the mass should stay near the entities the query names (measured on JSQuAD).
        Computed by the push method (Andersen, Chung and Lang 2006): residual mass is pushed from an entity to
        its neighbours only while it exceeds ``epsilon`` times the entity's degree, so a query costs about
        ``1 / (epsilon * (1 - alpha))`` edge visits whatever the size of the graph.
        """
        n = len(self)
        seed_idx = sorted({self.index[s] for s in seeds if s in self.index})
        if n == 0 or not seed_idx:
            return {}
        degree = self.indptr[1:] - self.indptr[:-1]
        residual = np.zeros(n)
        residual[seed_idx] = 1.0 / len(seed_idx)
        rank: dict[int, float] = {}
        queue = list(seed_idx)
        queued = set(queue)
        budget = int(4 / (epsilon * (1 - alpha)))  # a hard bound on edge visits, whatever the weights
        while queue and budget > 0:
            u = queue.pop()
            queued.discard(u)
            mass = float(residual[u])
            residual[u] = 0.0
            deg = int(degree[u])
            if deg == 0:  # nowhere to walk: the walker restarts, so the entity keeps its mass
                rank[u] = rank.get(u, 0.0) + mass
                continue
            rank[u] = rank.get(u, 0.0) + (1 - alpha) * mass
            lo, hi = int(self.indptr[u]), int(self.indptr[u + 1])
            nbrs = self.dst[lo:hi]
            residual[nbrs] += alpha * mass * self.norm[lo:hi]
            budget -= deg
            over = nbrs[residual[nbrs] >= epsilon * np.maximum(degree[nbrs], 1)]
            for v in over.tolist():
                if v not in queued:
                    queued.add(v)
                    queue.append(v)
        items = sorted(rank.items(), key=lambda kv: -kv[1])
        if top is not None:
            items = items[:top]
        return {int(self.entity_ids[i]): score for i, score in items if score > 1e-12}

    def communities(self, iterations: int = 12) -> dict[int, int]:
        """Label propagation (deterministic: nodes in id order, ties to the smaller label): entity id -> community.

        Isolated entities form their own singleton communities.
        """
        n = len(self)
        labels = np.arange(n)
        neighbours: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for a, b, w in zip(self.src.tolist(), self.dst.tolist(), self.weight.tolist(), strict=True):
            neighbours[a].append((b, w))
        for _ in range(iterations):
            changed = False
            for node in range(n):
                nbrs = neighbours.get(node)
                if not nbrs:
                    continue
                votes: dict[int, float] = defaultdict(float)
                for other, w in nbrs:
                    votes[int(labels[other])] += w
                best = min(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0]
                if best != labels[node]:
                    labels[node] = best
                    changed = True
            if not changed:
                break
        return {int(self.entity_ids[i]): int(labels[i]) for i in range(n)}
