"""The graph channel: entity/relation extraction, personalized PageRank and communities.

The heuristic extractor needs no model: Japanese noun phrases come from fugashi (runs of nouns that are proper nouns,
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
    """An undirected weighted entity graph in array form, for fast PageRank."""

    entity_ids: npt.NDArray[np.int64]
    src: npt.NDArray[np.int64]  # indices into entity_ids; both directions are stored
    dst: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    index: dict[int, int] = field(default_factory=dict)

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
        return cls(ids, np.array(s, dtype=np.int64), np.array(d, dtype=np.int64), np.array(w, dtype=np.float64), index)

    def __len__(self) -> int:
        return int(self.entity_ids.shape[0])

    def personalized_pagerank(self, seeds: Sequence[int], alpha: float = 0.5, iterations: int = 30,
                              top: int | None = None) -> dict[int, float]:
        """PageRank restarting at the ``seeds`` (entity ids): entity id -> score, the ``top`` best (or all non-zero).

        ``alpha`` (the probability of following an edge rather than jumping back to a seed) is 0.5, lower than the
        web's 0.85: for retrieval the mass should stay near the entities the query names (measured on JSQuAD).
        """
        n = len(self)
        seed_idx = [self.index[s] for s in seeds if s in self.index]
        if n == 0 or not seed_idx:
            return {}
        restart = np.zeros(n)
        restart[seed_idx] = 1.0 / len(seed_idx)
        out_weight = np.bincount(self.src, weights=self.weight, minlength=n)
        norm = np.divide(self.weight, out_weight[self.src], out=np.zeros_like(self.weight),
                         where=out_weight[self.src] > 0)
        rank = restart.copy()
        dangling = out_weight == 0
        for _ in range(iterations):
            spread = np.bincount(self.dst, weights=rank[self.src] * norm, minlength=n)
            new = alpha * (spread + rank[dangling].sum() * restart) + (1 - alpha) * restart
            if np.abs(new - rank).sum() < 1e-6:
                rank = new
                break
            rank = new
        nz = np.nonzero(rank > 1e-9)[0]
        if top is not None and len(nz) > top:
            nz = nz[np.argpartition(-rank[nz], top - 1)[:top]]
        return {int(self.entity_ids[i]): float(rank[i]) for i in nz}

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
