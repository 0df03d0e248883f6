"""Fusing the channels' rankings with the classifier's weights.

Two methods, both measured on JSQuAD by ``bench/search_jsquad.py``:

* weighted reciprocal-rank fusion: ``sum_c w_c / (k + rank_c)``; ignores score scales entirely;
* normalised score fusion: each channel's scores min-max scaled to [0, 1] over its own hits, then ``sum_c w_c * s_c``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

FusionMethod: TypeAlias = Literal["rrf", "score"]
Ranking: TypeAlias = Sequence[tuple[int, float]]  # (chunk id, channel score), best first
RRF_K = 60
DEFAULT_FUSION: FusionMethod = "score"  # measured better on JSQuAD (bench/search_jsquad.py)


@dataclass
class Fused:
    chunk_id: int
    score: float
    channel_scores: dict[str, float] = field(default_factory=dict)
    channel_ranks: dict[str, int] = field(default_factory=dict)


def _collect(rankings: Mapping[str, Ranking]) -> dict[int, Fused]:
    out: dict[int, Fused] = {}
    for channel, ranking in rankings.items():
        for rank, (chunk_id, score) in enumerate(ranking, start=1):
            fused = out.setdefault(chunk_id, Fused(chunk_id, 0.0))
            fused.channel_scores[channel] = score
            fused.channel_ranks[channel] = rank
    return out


def reciprocal_rank_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
                           k: int = RRF_K) -> list[Fused]:
    fused = _collect(rankings)
    for item in fused.values():
        item.score = sum(weights.get(c, 0.0) / (k + r) for c, r in item.channel_ranks.items())
    return sorted(fused.values(), key=lambda f: (-f.score, f.chunk_id))


def normalised_score_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float]) -> list[Fused]:
    fused = _collect(rankings)
    for channel, ranking in rankings.items():
        if not ranking:
            continue
        scores = [s for _, s in ranking]
        lo, hi = min(scores), max(scores)
        span = hi - lo
        w = weights.get(channel, 0.0)
        for chunk_id, score in ranking:
            # A channel with a single hit (or all equal) gives that hit full marks.
            fused[chunk_id].score += w * ((score - lo) / span if span > 0 else 1.0)
    return sorted(fused.values(), key=lambda f: (-f.score, f.chunk_id))


def fuse(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
         method: FusionMethod = DEFAULT_FUSION) -> list[Fused]:
    if method == "rrf":
        return reciprocal_rank_fusion(rankings, weights)
    return normalised_score_fusion(rankings, weights)
