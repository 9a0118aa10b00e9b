"""Margin-based scoring and candidate selection for bitext mining (Artetxe & Schwenk, 2019).

For a candidate pair ``(x, y)`` the score is ``margin(cos(x, y), (fwd_mean(x) + bwd_mean(y)) / 2)`` where
``fwd_mean(x)`` is the mean cosine of ``x`` to its k nearest neighbours among the targets and
``bwd_mean(y)`` the same for ``y`` among the sources; this is the paper's
``sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{z in NN_k(y)} cos(y, z) / 2k``. Candidates and their
selection follow LASER's ``mine_bitexts.py``: each sentence's best-scoring pair among its k neighbours,
in one direction, the other, both (``max``, then a greedy 1:1 filter) or where both agree
(``intersect``). Everything here is pure and vectorised on the k-NN lists of :mod:`xlsent.mining.knn`.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np


class Margin(StrEnum):
    """How the cosine ``a`` is compared with the neighbourhood mean ``b``."""

    RATIO = "ratio"  # a / b
    DISTANCE = "distance"  # a - b
    ABSOLUTE = "absolute"  # a


class Mode(StrEnum):
    """Which candidates are kept: each source's best, each target's best, both (1:1), or mutual bests."""

    FORWARD = "forward"
    BACKWARD = "backward"
    MAX = "max"
    INTERSECT = "intersect"


def margin_scores(cos: np.ndarray, fwd_mean: np.ndarray, bwd_mean: np.ndarray, margin: Margin | str) -> np.ndarray:
    """Margin scores (float64) of pairs with cosines ``cos``; the arrays broadcast against each other.
    A ratio over a neighbourhood mean of exactly 0 (vectors orthogonal to every neighbour, or zero vectors: only a
    degenerate or toy encoder, or an empty sentence, which callers mark apart) is 0, not NaN or inf: no evidence of a
    translation, and every score a finite number (JSON, sorting, thresholds).

    >>> margin_scores(np.array([0.9]), np.array([0.5]), np.array([0.7]), Margin.RATIO)
    array([1.5])
    >>> margin_scores(np.array([0.0, 0.3]), np.array([0.0, 0.2]), np.array([0.0, -0.2]), "ratio").tolist()
    [0.0, 0.0]
    >>> margin_scores(np.array([0.9]), np.array([0.5]), np.array([0.7]), "distance").round(6)
    array([0.3])
    """
    a = np.asarray(cos, dtype=np.float64)
    b = (np.asarray(fwd_mean, dtype=np.float64) + np.asarray(bwd_mean, dtype=np.float64)) / 2
    margin = Margin(margin)
    if margin is Margin.RATIO:
        a, b = np.broadcast_arrays(a, b)
        return np.divide(a, b, out=np.zeros(a.shape), where=b != 0)
    if margin is Margin.DISTANCE:
        return a - b
    return np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)).copy()


def neighbour_scores(fwd_idx: np.ndarray, fwd_sim: np.ndarray, bwd_idx: np.ndarray, bwd_sim: np.ndarray,
                     margin: Margin | str = Margin.RATIO) -> tuple[np.ndarray, np.ndarray]:
    """Margin score (float64) of every neighbour in the forward ``(n_x, k)`` and backward ``(n_y, k)`` k-NN lists,
    the means of the similarity rows being the neighbourhoods (as :func:`select_candidates` scores them).

    >>> fwd, bwd = neighbour_scores(np.array([[0]]), np.array([[0.5]]), np.array([[0]]), np.array([[0.5]]))
    >>> fwd.tolist(), bwd.tolist()
    ([[1.0]], [[1.0]])
    """
    margin = Margin(margin)
    fwd_idx, fwd_sim, bwd_idx, bwd_sim = (np.asarray(a) for a in (fwd_idx, fwd_sim, bwd_idx, bwd_sim))
    fwd_mean = fwd_sim.mean(axis=1, dtype=np.float64)
    bwd_mean = bwd_sim.mean(axis=1, dtype=np.float64)
    return (margin_scores(fwd_sim, fwd_mean[:, None], bwd_mean[fwd_idx], margin),
            margin_scores(bwd_sim, bwd_mean[:, None], fwd_mean[bwd_idx], margin))


def _best(idx: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of a k-NN list, the neighbour with the highest margin score (first on ties) and that score."""
    col = scores.argmax(axis=1)
    rows = np.arange(len(idx))
    return idx[rows, col].astype(np.int64), scores[rows, col]


def greedy_one_to_one(src: np.ndarray, tgt: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep pairs best score first, skipping any whose source or target is already used (as LASER's ``max``).

    Returns the kept pairs in that order (score descending; equal scores keep their input order).

    >>> s, t, sc = greedy_one_to_one(np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0.9, 0.8, 0.7]))
    >>> s.tolist(), t.tolist(), sc.tolist()
    ([0, 1], [1, 2], [0.9, 0.7])
    """
    order = np.argsort(-np.asarray(score), kind="stable")
    used_src: set[int] = set()
    used_tgt: set[int] = set()
    keep = []
    for i, s, t in zip(order.tolist(), np.asarray(src)[order].tolist(), np.asarray(tgt)[order].tolist(), strict=True):
        if s not in used_src and t not in used_tgt:
            used_src.add(s)
            used_tgt.add(t)
            keep.append(i)
    kept = np.asarray(keep, dtype=np.int64)
    return np.asarray(src)[kept], np.asarray(tgt)[kept], np.asarray(score)[kept]


def select_candidates(fwd_idx: np.ndarray, fwd_sim: np.ndarray, bwd_idx: np.ndarray, bwd_sim: np.ndarray, *,
                      margin: Margin | str = Margin.RATIO,
                      mode: Mode | str = Mode.MAX) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Margin-scored candidate pairs ``(src_idx int64, tgt_idx int64, score float32)`` from k-NN lists.

    ``fwd_idx``/``fwd_sim`` ``(n_x, k)`` are each source's nearest targets, ``bwd_idx``/``bwd_sim``
    ``(n_y, k)`` each target's nearest sources; the means of the similarity rows are the neighbourhoods of
    the margin. Forward and intersect pairs come in source order, backward pairs in target order, ``max``
    pairs best first.

    >>> fwd_idx, fwd_sim = np.array([[0, 1], [0, 1]]), np.array([[0.9, 0.2], [0.5, 0.4]])
    >>> bwd_idx, bwd_sim = np.array([[0, 1], [1, 0]]), np.array([[0.9, 0.5], [0.4, 0.2]])
    >>> src, tgt, score = select_candidates(fwd_idx, fwd_sim, bwd_idx, bwd_sim, margin="ratio", mode="max")
    >>> src.tolist(), tgt.tolist(), score.astype(float).round(3).tolist()
    ([0, 1], [0, 1], [1.44, 1.067])
    """
    mode = Mode(mode)
    fwd_scores, bwd_scores = neighbour_scores(fwd_idx, fwd_sim, bwd_idx, bwd_sim, margin)
    src_all, tgt_all = np.arange(len(fwd_scores), dtype=np.int64), np.arange(len(bwd_scores), dtype=np.int64)
    fwd_best, fwd_score = _best(np.asarray(fwd_idx), fwd_scores)
    bwd_best, bwd_score = _best(np.asarray(bwd_idx), bwd_scores)
    if mode is Mode.FORWARD:
        src, tgt, score = src_all, fwd_best, fwd_score
    elif mode is Mode.BACKWARD:
        src, tgt, score = bwd_best, tgt_all, bwd_score
    elif mode is Mode.INTERSECT:
        mutual = bwd_best[fwd_best] == src_all
        src, tgt, score = src_all[mutual], fwd_best[mutual], fwd_score[mutual]
    else:
        src, tgt, score = greedy_one_to_one(np.concatenate([src_all, bwd_best]), np.concatenate([fwd_best, tgt_all]),
                                            np.concatenate([fwd_score, bwd_score]))
    return src, tgt, score.astype(np.float32)
