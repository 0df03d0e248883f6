"""Fusing the channels' rankings with the classifier's weights.

Three methods, all measured on JSQuAD by ``bench/search_jsquad.py`` (tuned on the questions of even paragraphs,
checked on the odd ones):

* weighted reciprocal-rank fusion: ``sum_c w_c / (k + rank_c)``; ignores score scales entirely, so a channel that
  is sure of its first hit and one that hesitates count the same (R@1 0.82 on JSQuAD, below keyword alone);
* normalised score fusion: each channel's scores min-max scaled to [0, 1] over its own hits, then
  ``sum_c w_c * s_c``; min-max stretches every channel to the same range, so a dense channel whose cosines lie
  within 0.02 of each other weighs as much as a keyword channel with one clear winner (R@1 0.897);
* calibrated (z-score) fusion, the default: keyword bm25 and cosine are standardised per query over the channel's
  own hits (``(s - mean) / std``), so a hit counts by how far it stands out of that channel's list; a hit a
  channel did not return gets the channel's lowest value. The graph channel's personalized-PageRank mass is
  heavy-tailed with many ties, for which the z-score is a poor fit (measured worse), so it stays min-max scaled to
  [0, 1], and a query naming no known entity leaves it empty (it then adds nothing). R@1 0.919, R@10 0.983.

The calibrated fused scores are finally rescaled to [0, 1] over the fused list (the best hit scores 1), so that
scores read the same whichever method ranked them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

import numpy as np

FusionMethod: TypeAlias = Literal["rrf", "score", "zscore"]
FUSION_METHODS: tuple[FusionMethod, ...] = ("rrf", "score", "zscore")
Scaling: TypeAlias = Literal["z", "minmax"]
Ranking: TypeAlias = Sequence[tuple[int, float]]  # (chunk id, channel score), best first
RRF_K = 60
DEFAULT_FUSION: FusionMethod = "zscore"  # measured best on JSQuAD (bench/search_jsquad.py)
CHANNEL_SCALING: dict[str, Scaling] = {"graph": "minmax"}  # every other channel: "z"


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


def _sorted(fused: dict[int, Fused]) -> list[Fused]:
    return sorted(fused.values(), key=lambda f: (-f.score, f.chunk_id))


def reciprocal_rank_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
                           k: int = RRF_K) -> list[Fused]:
    fused = _collect(rankings)
    for item in fused.values():
        item.score = sum(weights.get(c, 0.0) / (k + r) for c, r in item.channel_ranks.items())
    return _sorted(fused)


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
    return _sorted(fused)


def scale_scores(scores: Sequence[float], scaling: Scaling) -> tuple[list[float], float]:
    """One channel's scores scaled for fusion, and the value for a hit the channel did not return.

    A channel whose hits all score the same (a single hit, say) gives them 1 and everything else 0, as min-max
    does: the channel found them and nothing else.
    """
    values = np.asarray(scores, dtype=np.float64)
    if scaling == "z":
        std = float(values.std())
        if std <= 0:
            return [1.0] * len(scores), 0.0
        z = (values - float(values.mean())) / std
        return z.tolist(), float(z.min())
    lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        return [1.0] * len(scores), 0.0
    return ((values - lo) / (hi - lo)).tolist(), 0.0


def calibrated_score_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
                            scaling: Mapping[str, Scaling] | None = None) -> list[Fused]:
    """``sum_c w_c * scaled_c`` with each channel scaled per query (z-score unless ``scaling`` says min-max); a hit
    missing from a channel gets that channel's lowest scaled value. Scores end rescaled to [0, 1] (best = 1)."""
    scaling = CHANNEL_SCALING if scaling is None else scaling
    fused = _collect(rankings)
    for channel, ranking in rankings.items():
        w = weights.get(channel, 0.0)
        if not ranking or w == 0:
            continue
        scaled, missing = scale_scores([s for _, s in ranking], scaling.get(channel, "z"))
        found = {chunk_id: value for (chunk_id, _), value in zip(ranking, scaled, strict=True)}
        for chunk_id, item in fused.items():
            item.score += w * found.get(chunk_id, missing)
    if fused:
        lo, hi = min(f.score for f in fused.values()), max(f.score for f in fused.values())
        for item in fused.values():
            item.score = (item.score - lo) / (hi - lo) if hi > lo else 1.0
    return _sorted(fused)


def fuse(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
         method: FusionMethod = DEFAULT_FUSION) -> list[Fused]:
    if method == "rrf":
        return reciprocal_rank_fusion(rankings, weights)
    if method == "score":
        return normalised_score_fusion(rankings, weights)
    return calibrated_score_fusion(rankings, weights)
