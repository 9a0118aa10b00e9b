"""``/v1/similarity`` and ``/v1/align`` on vectors the engine made: a cosine matrix, and margin-scored pairs chosen
exactly as ``xlsent mine`` chooses them on the same lines (distinct sentences, exact k-NN, margin, selection)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlsent.mining.pipeline import MineConfig, mine_arrays, select_pairs
from xlsent.mining.unify import unify


@dataclass(frozen=True)
class Pair:
    """A mined pair: the rows of its source and target sentence (their first rows, when a sentence repeats), its
    margin score and cosine."""

    src: int
    tgt: int
    score: float
    cosine: float


def cosine_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(len(x), len(y))`` cosines of unit rows."""
    return np.asarray(x, dtype=np.float32) @ np.asarray(y, dtype=np.float32).T


def align(src: list[str], tgt: list[str], x: np.ndarray, y: np.ndarray, cfg: MineConfig) -> list[Pair]:
    """The pairs ``xlsent mine`` writes for ``src`` and ``tgt`` (lines) with vectors ``x`` and ``y``, best first."""
    src_u, tgt_u = unify(src, cfg.unify), unify(tgt, cfg.unify)
    xs, ys = src_u.distinct(x), tgt_u.distinct(y)
    chosen = select_pairs(mine_arrays(xs, ys, cfg), src_u.texts, tgt_u.texts, cfg)
    return [Pair(int(src_u.first[s]), int(tgt_u.first[t]), float(score), float(xs[s] @ ys[t]))
            for s, t, score in zip(chosen.src, chosen.tgt, chosen.score, strict=True)]
